"""Mounts the apps' routers under /api/v1/ and maps domain errors to JSON once."""

from functools import wraps

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.shortcuts import render
from django.utils.csp import CSP
from django.views.decorators.csp import csp_override
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from pydantic import BaseModel

from agents.api import long_poll_openapi
from agents.api import router as agents_router
from rooms.api import router as rooms_router

from .auth import Unauthenticated
from .errors import DomainError, TryLater, describe_validation_error
from .http import challenge_for, json_content_type_problem
from .outage import RETRY_AFTER_S, unavailable


class API(NinjaAPI):
    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        schema = super().get_openapi_schema(path_prefix=path_prefix, path_params=path_params)
        # Routes served before Django (osfoundry/asgi.py) are listed with the others.
        schema["paths"]["/api/v1/agents/messages/wait"] = long_poll_openapi()
        return schema

    def validation_error_from_error_contexts(self, error_contexts) -> ValidationError:
        # Keep what ninja strips (the input, the allowed fields), so messages can name the fix.
        errors = []
        for context in error_contexts:
            model = context.model
            allowed = [
                name
                for field in model.model_fields.values()
                if isinstance(field.annotation, type) and issubclass(field.annotation, BaseModel)
                for name in field.annotation.model_fields
            ]
            for error in context.pydantic_validation_error.errors(include_url=False):
                error["loc"] = (model.__ninja_param_source__,) + tuple(error["loc"])
                error["allowed"] = allowed
                errors.append(error)
        return ValidationError(errors)


class LocalSwagger(Swagger):
    """Swagger UI from django-ninja's own static files (ninja is in INSTALLED_APPS), started by
    our script file: never a CDN, which on the console's origin could act as the signed-in
    owner, and no inline script (the console's CSP)."""

    template = "osfoundry/api_docs.html"

    def render_page(self, request, api, **kwargs):
        swagger_settings = {
            **self.settings,
            "url": self.get_openapi_url(api, kwargs),
            "validatorUrl": None,  # Swagger UI would send the schema to validator.swagger.io
        }
        context = {"api": api, "swagger_settings": swagger_settings}
        return render_docs(request, self.template, context)


# Swagger UI draws its icons as data: images; they run nothing. Everything else is the console's.
@csp_override({**settings.SECURE_CSP, "img-src": [CSP.SELF, "data:"]})
def render_docs(request, template, context):
    return render(request, template, context)


api = API(
    title="osFoundry Rooms API",
    version="1",
    urls_namespace="api",
    docs_url="/docs",
    docs=LocalSwagger(),
    description=(
        "Agents propose apps to Rooms; Room owners approve them. Authenticate with "
        "`Authorization: Bearer <token>` (scopes osfoundry:read, osfoundry:write)."
    ),
)
api.add_router("/", rooms_router)
api.add_router("/", agents_router)


def error_response(request, status: int, body: dict, headers: dict | None = None):
    response = api.create_response(request, {"error": body}, status=status)
    for name, value in (headers or {}).items():
        response[name] = value
    return response


def not_json(request):
    """A 415 for a request that carries a body not sent as JSON (osfoundry.http's rule), else
    None. A body is carried when its length is not zero or it is sent chunked."""
    meta = request.META
    if meta.get("CONTENT_LENGTH", "") in ("", "0") and "HTTP_TRANSFER_ENCODING" not in meta:
        return None
    problem = json_content_type_problem(meta.get("CONTENT_TYPE"))
    if problem is None:
        return None
    error = {"code": "unsupported_media_type", "message": f"The body must be JSON: {problem}"}
    return error_response(request, 415, {**error, "field": "Content-Type"})


def json_bodies_only(run):
    """Wraps every operation, before its auth and parsing (ninja's "view" decorator mode).
    Every operation is synchronous (Django runs it in a thread)."""

    @wraps(run)
    def check(request, *args, **kwargs):
        if (refusal := not_json(request)) is not None:
            return refusal
        return run(request, *args, **kwargs)

    return check


api.add_decorator(json_bodies_only, mode="view")


@csrf_exempt
def not_found(request):
    """Any method on an unknown path under /api/v1/ (osfoundry/urls.py routes them here after
    the API's own): a JSON error like every other API answer, not Django's HTML page."""
    message = f"No API endpoint at {request.path}; the endpoints are listed at /api/v1/docs"
    return error_response(request, 404, {"code": "not_found", "message": message})


@api.exception_handler(DomainError)
def domain_error(request, exc: DomainError):
    challenge = challenge_for(exc)
    headers = {"WWW-Authenticate": challenge} if challenge else {}
    if isinstance(exc, TryLater):
        headers["Retry-After"] = str(exc.retry_after)
    return error_response(request, exc.http_status, exc.as_dict(), headers)


@api.exception_handler(OperationalError)
@api.exception_handler(InterfaceError)
def database_outage(request, exc):
    response = domain_error(request, unavailable(exc))
    response["Retry-After"] = str(RETRY_AFTER_S)
    return response


@api.exception_handler(AuthenticationError)
def unauthenticated(request, exc):
    return domain_error(
        request,
        Unauthenticated("A valid bearer token is required: send Authorization: Bearer <token>"),
    )


@api.exception_handler(ValidationError)
def invalid_input(request, exc: ValidationError):
    allowed = next((e.get("allowed") for e in exc.errors if e.get("allowed")), None)
    error = describe_validation_error(exc.errors, allowed=allowed)
    return error_response(request, 400, error.as_dict())


@api.exception_handler(RequestDataTooBig)
def too_big(request, exc):
    message = (
        f"body: larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes; a snippet holds at most "
        f"{settings.SNIPPET_MAX_TOTAL_BYTES} bytes of files. An app this size belongs in a "
        "repository: use propose_room_repo_app (POST .../proposals/repo)"
    )
    return error_response(request, 413, {"code": "too_large", "message": message, "field": "body"})


@api.exception_handler(HttpError)
def http_error(request, exc: HttpError):
    message = str(exc)
    if message.startswith("Cannot parse request body"):
        message = "body: not valid JSON; send a JSON object with Content-Type: application/json"
    return error_response(request, exc.status_code, {"code": "bad_request", "message": message})


if not settings.DEBUG:
    # Never a 500 page of HTML for an API client: an unexpected error is still JSON.
    @api.exception_handler(Exception)
    def unexpected(request, exc):
        import logging

        logging.getLogger("osfoundry.api").exception("unhandled API error")
        return error_response(
            request, 500, {"code": "server_error", "message": "Unexpected error; it was logged"}
        )
