from allauth.account.adapter import DefaultAccountAdapter
from django.conf import settings


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request):
        # Admins add members; self sign-up is an explicit opt-in (SIGNUP_OPEN=1).
        return settings.SIGNUP_OPEN
