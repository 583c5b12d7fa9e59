"""Assertions that a refusal is the intended one: a broken route answers 404 too, so a test of an
access rule checks who answered and what they said, not only the status."""


def refused_by_view(response, view_name: str, status: int = 404) -> None:
    """The console view the test meant answered `status` (Django's test client records the
    view that answered; a path that matched no route has none)."""
    assert response.status_code == status
    assert response.resolver_match is not None, "no view answered: the route does not exist"
    assert response.resolver_match.view_name == view_name


def api_not_found(response, what: str, field: str | None = None) -> None:
    """The API's own "not found" for `what` (e.g. "Room"), as JSON with its code."""
    assert response.status_code == 404
    error = response.json()["error"]
    assert error["code"] == "not_found"
    assert error["message"].startswith(f"{what} "), error["message"]
    if field is not None:
        assert error["field"] == field
