"""Unknown paths under /api/v1/ answer a JSON error, as every API error does; other unknown
paths keep Django's HTML 404 page."""

import pytest


@pytest.mark.parametrize("method", ["get", "post", "put", "patch", "delete", "options"])
@pytest.mark.parametrize("path", ["/api/v1/nope", "/api/v1/rooms/", "/api/v1/a/b/c?x=1"])
def test_an_unknown_api_path_is_a_json_404(client, method, path):
    response = getattr(client, method)(path)
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json; charset=utf-8"
    endpoint = path.partition("?")[0]
    assert response.json() == {
        "error": {
            "code": "not_found",
            "message": f"No API endpoint at {endpoint}; the endpoints are listed at /api/v1/docs",
        }
    }


def test_an_unknown_api_path_is_a_json_404_with_a_token_too(client, agent, token_factory):
    response = client.get("/api/v1/nope", HTTP_AUTHORIZATION=f"Bearer {token_factory(agent)}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


def test_known_api_paths_are_unchanged(client):
    response = client.get("/api/v1/rooms")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "invalid_token"


@pytest.mark.parametrize("path", ["/nope", "/api/v2/rooms", "/apiv1/x"])
def test_other_unknown_paths_stay_html_pages(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert response["Content-Type"].startswith("text/html")
