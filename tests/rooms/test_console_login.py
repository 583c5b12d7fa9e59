"""Logging in to the console with django-allauth: password, closed sign-up, logout, TOTP."""

from allauth.mfa.models import Authenticator
from django.urls import reverse


def test_login_page_has_the_console_look(client, db):
    response = client.get(reverse("account_login"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "rooms/console.css" in html
    assert "<h1>Log in</h1>" in html
    assert "Accounts are created by your administrator." in html


def test_owner_logs_in_with_username_and_lands_on_the_inbox(client, owner):
    response = client.post(
        reverse("account_login"), {"login": "owner", "password": "pw-12345678"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("rooms:inbox")
    assert response.context["user"] == owner


def test_owner_logs_in_with_email(client, owner):
    client.post(reverse("account_login"), {"login": "owner@example.com", "password": "pw-12345678"})
    assert client.get(reverse("rooms:inbox")).status_code == 200


def test_wrong_password_is_refused_with_a_message(client, owner):
    response = client.post(reverse("account_login"), {"login": "owner", "password": "nope-nope"})
    assert response.status_code == 200
    assert "not correct" in response.content.decode()
    assert client.get(reverse("rooms:inbox")).status_code == 302


def test_repeated_failures_are_rate_limited(client, owner):
    for _ in range(6):
        response = client.post(reverse("account_login"), {"login": "owner", "password": "bad-1"})
    assert response.status_code in (200, 429)
    assert "Too many failed login attempts" in response.content.decode()


def test_sign_up_is_closed_by_default(client, db):
    response = client.get(reverse("account_signup"))
    assert "Sign Up Closed" in response.content.decode() or response.status_code == 403


def test_anonymous_is_sent_to_login(client, db):
    response = client.get(reverse("rooms:inbox"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("account_login"))


def test_logout_is_a_post(client, owner):
    client.force_login(owner)
    page = client.get(reverse("account_logout"))
    assert "Log out of osFoundry on this browser?" in page.content.decode()
    client.post(reverse("account_logout"))
    assert client.get(reverse("rooms:inbox")).status_code == 302


def test_password_change(client, owner):
    client.force_login(owner)
    page = client.get(reverse("account_change_password"))
    assert "<h1>Change password</h1>" in page.content.decode()
    response = client.post(
        reverse("account_change_password"),
        {"oldpassword": "pw-12345678", "password1": "new-pass-4711", "password2": "new-pass-4711"},
    )
    assert response.status_code == 302
    owner.refresh_from_db()
    assert owner.check_password("new-pass-4711")


def test_totp_can_be_activated_and_is_asked_at_login(client, owner):
    from allauth.mfa.totp.internal.auth import hotp_value

    client.post(reverse("account_login"), {"login": "owner", "password": "pw-12345678"})
    # Turning on two-factor asks for the password again, on a page in the console's look.
    assert client.get(reverse("mfa_activate_totp")).status_code == 302
    page = client.get(reverse("account_reauthenticate"))
    assert "rooms/console.css" in page.content.decode()
    client.post(reverse("account_reauthenticate"), {"password": "pw-12345678"})
    page = client.get(reverse("mfa_activate_totp"))
    assert page.status_code == 200
    assert "rooms/console.css" in page.content.decode()
    secret = page.context["form"].secret
    code = current_totp(secret, hotp_value)
    response = client.post(reverse("mfa_activate_totp"), {"code": code})
    assert response.status_code == 302
    assert Authenticator.objects.filter(user=owner, type=Authenticator.Type.TOTP).exists()

    client.post(reverse("account_logout"))
    response = client.post(
        reverse("account_login"), {"login": "owner", "password": "pw-12345678"}, follow=True
    )
    assert response.redirect_chain[-1][0] == reverse("mfa_authenticate")
    assert client.get(reverse("rooms:inbox")).status_code == 302


def current_totp(secret, hotp_value):
    import time

    from allauth.mfa import app_settings

    counter = int(time.time()) // app_settings.TOTP_PERIOD
    return f"{hotp_value(secret, counter):0{app_settings.TOTP_DIGITS}d}"
