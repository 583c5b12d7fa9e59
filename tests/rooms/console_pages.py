"""Helpers for the console's browser tests at the three window sizes owners use: a signed-in
page at a size (a phone with touch), what overlaps what, and screenshots in artifacts/."""

from tests.browser import ARTIFACTS, TIMEOUT_MS, sign_in

# Width, height and whether it is a phone (touch, no hover): the sizes issue 35 names.
SIZES = {
    "1280x800": (1280, 800, False),
    "1440x900": (1440, 900, False),
    "390x844": (390, 844, True),
}


def open_page(browser, base, username, size="1280x800", *, login=True):
    width, height, phone = SIZES[size]
    context = browser.new_context(
        viewport={"width": width, "height": height}, is_mobile=phone, has_touch=phone
    )
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    page.native_dialogs = []
    page.on("dialog", lambda dialog: (page.native_dialogs.append(dialog.message), dialog.dismiss()))
    if login:
        sign_in(page, base, username)
    return page


def shoot(page, name, *, full_page=True):
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / name), full_page=full_page)


def box(locator) -> dict:
    found = locator.bounding_box()
    assert found is not None, f"{locator} is not rendered"
    return found


def overlap(a: dict, b: dict) -> bool:
    """Whether two boxes share any area (touching edges do not)."""
    return (
        min(a["x"] + a["width"], b["x"] + b["width"]) - max(a["x"], b["x"]) > 0.5
        and min(a["y"] + a["height"], b["y"] + b["height"]) - max(a["y"], b["y"]) > 0.5
    )


def bottom(b: dict) -> float:
    return b["y"] + b["height"]


def fits_the_width(page) -> bool:
    """Nothing makes the page scroll sideways."""
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def visible_boxes(page, selector: str) -> list[dict]:
    locator = page.locator(selector)
    return [box(locator.nth(i)) for i in range(locator.count()) if locator.nth(i).is_visible()]
