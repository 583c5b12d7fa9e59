"""The third-party packages an app brings (services.app_packages): the curated libraries the files
it runs import, each with its exact version, licence, size, origin and npm page; on the card,
on an update card as what it adds, removes or changes, and through read_room_app_status and
read_room_proposal over MCP (official client) and REST."""

import json

import pytest
from django.urls import reverse

from rooms import services
from rooms.runtime import libraries
from rooms.runtime.libraries import Package
from tests.mcpclient import call_tool
from tests.rooms.helpers import propose, update

pytestmark = pytest.mark.django_db

MANIFEST = json.loads(libraries.MANIFEST.read_text())


def size_of(*files: str) -> int:
    return sum(MANIFEST["files"][name]["bytes"] for name in files)


CHART_APP = {
    "src/App.tsx": (
        "import {Bar, BarChart} from 'recharts';\nimport debounce from 'lodash/debounce';\n"
        "import {Chart} from './Chart';\nimport './index.css';\n"
        "export default function App() {\n  const d = debounce(() => {}, 10);\n"
        "  return <BarChart width={100} height={50} data={[]} onClick={d}><Bar dataKey='x' />"
        "<Chart /></BarChart>;\n}\n"
    ),
    "src/Chart.tsx": "import {Bar} from 'react-chartjs-2';\nexport const Chart = () => <Bar "
    "data={{labels: [], datasets: []}} />;\n",
    "src/index.css": '@import "tailwindcss";\n',
    # Never loaded, so never run: what it imports is not part of the app.
    "src/Old.tsx": "import * as THREE from 'three';\nexport const scene = new THREE.Scene();\n",
}
CHART_PACKAGES = [
    {
        "name": "@tailwindcss/browser",
        "version": "4.3.5",
        "license": "MIT",
        "bytes": size_of("tailwindcss"),
        "origin": "curated",
        "url": "https://www.npmjs.com/package/@tailwindcss/browser/v/4.3.5",
        "osi_license": True,
        "install_scripts": [],
        "advisories": [],
    },
    {
        "name": "chart.js",
        "version": "4.6.1",
        "license": "MIT",
        "bytes": size_of("chartjs"),
        "origin": "curated",
        "url": "https://www.npmjs.com/package/chart.js/v/4.6.1",
        "osi_license": True,
        "install_scripts": [],
        "advisories": [],
    },
    {
        "name": "lodash",
        "version": "4.18.1",
        "license": "MIT",
        "bytes": size_of("lodash"),
        "origin": "curated",
        "url": "https://www.npmjs.com/package/lodash/v/4.18.1",
        "osi_license": True,
        "install_scripts": [],
        "advisories": [],
    },
    {
        "name": "react-chartjs-2",
        "version": "5.3.1",
        "license": "MIT",
        "bytes": size_of("react-chartjs-2"),
        "origin": "curated",
        "url": "https://www.npmjs.com/package/react-chartjs-2/v/5.3.1",
        "osi_license": True,
        "install_scripts": [],
        "advisories": [],
    },
    {
        "name": "recharts",
        "version": "3.11.3",
        "license": "MIT",
        "bytes": size_of("recharts"),
        "origin": "curated",
        "url": "https://www.npmjs.com/package/recharts/v/3.11.3",
        "osi_license": True,
        "install_scripts": [],
        "advisories": [],
    },
]


def listed(proposal) -> list[dict]:
    return [package.as_dict() for package in services.app_packages(proposal)]


def test_the_packages_are_those_the_files_that_run_import_with_what_they_build_on(room, agent):
    proposal = propose(room, agent, CHART_APP)
    # chart.js comes with react-chartjs-2; three, imported only by a file nothing loads, does not.
    assert listed(proposal) == CHART_PACKAGES


def test_a_package_of_two_files_counts_the_bytes_of_those_the_app_loads(room, agent):
    files = {
        "src/App.tsx": "import {format} from 'date-fns';\nimport {fr} from 'date-fns/locale';\n"
        "export default () => <p>{format(new Date(0), 'PPPP', {locale: fr})}</p>;\n"
    }
    (package,) = listed(propose(room, agent, files))
    assert (package["name"], package["bytes"]) == (
        "date-fns",
        size_of("date-fns", "date-fns-locale"),
    )


def test_an_app_of_its_own_files_and_react_brings_no_package(room, agent, files):
    assert listed(propose(room, agent, files)) == []


def test_package_changes_name_what_is_added_removed_or_at_another_version():
    old = [Package("lodash", "4.17.21", "MIT", 1), Package("clsx", "2.1.1", "MIT", 1)]
    new = [Package("lodash", "4.18.1", "MIT", 1), Package("d3", "7.9.2", "ISC", 1)]
    changes = [
        (c["name"], c["change"], c["old"], c["new"]) for c in libraries.package_changes(old, new)
    ]
    assert changes == [
        ("clsx", "removed", "2.1.1", None),
        ("d3", "added", None, "7.9.2"),
        ("lodash", "changed", "4.17.21", "4.18.1"),
    ]
    assert libraries.package_changes(new, new) == []


# -------------------------------------------------------------------------------------- card


def test_the_card_lists_each_package_with_its_version_licence_size_origin_and_npm_page(
    client, room, owner, agent
):
    proposal = propose(room, agent, CHART_APP)
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    assert "Third-party packages (5)" in html
    assert (
        '<td><a href="https://www.npmjs.com/package/recharts/v/3.11.3" rel="noopener noreferrer">'
        "recharts</a></td>\n      <td><code>3.11.3</code></td>\n      <td>MIT</td>" in html
    )
    assert '<tr data-package="@tailwindcss/browser" data-origin="curated">' in html
    assert html.count('<span class="pill pill-curated"') == 5
    assert "three" not in html.split("data-packages")[1].split("</section>")[0]


def test_a_card_without_packages_says_so(client, room, owner, agent, files):
    proposal = propose(room, agent, files)
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[proposal.pk])).content.decode()
    assert "Third-party packages (0)" in html
    assert "None: the app runs only its own files and React." in html


def test_an_update_card_shows_the_packages_added_and_removed(client, room, owner, agent):
    first = {
        "src/App.tsx": "import _ from 'lodash';\nimport clsx from 'clsx';\n"
        "export default () => <p className={clsx('a')}>{_.capitalize('x')}</p>;\n"
    }
    proposal = propose(room, agent, first)
    app = services.approve_proposal(owner=owner, proposal_id=proposal.pk)
    second = {
        "src/App.tsx": "import {LineChart} from 'recharts';\nimport clsx from 'clsx';\n"
        "export default () => <LineChart className={clsx('a')} width={9} height={9} data={[]} />;\n"
    }
    pending = update(app, agent, second).proposal
    client.force_login(owner)
    html = client.get(reverse("rooms:proposal", args=[pending.pk])).content.decode()
    assert "Third-party packages (2)" in html
    changes = html.split("data-package-changes>")[1].split("</ul>")[0]
    assert 'data-package-change="added"><span class="pill">added</span> ' in changes
    assert "recharts</a> 3.11.3</li>" in changes
    assert 'data-package-change="removed"' in changes and "lodash</a> 4.18.1</li>" in changes
    assert "clsx" not in changes  # the same in both


# --------------------------------------------------------------------------- MCP and REST


def approved(room, owner, agent):
    proposal = propose(room, agent, CHART_APP)
    return services.approve_proposal(owner=owner, proposal_id=proposal.pk)


@pytest.mark.django_db(transaction=True)
def test_read_room_app_status_and_read_room_proposal_list_the_packages_over_mcp(
    asgi_server, room, owner, agent, token_factory
):
    app = approved(room, owner, agent)
    token = token_factory(agent)
    status = call_tool(
        asgi_server.mcp_url,
        token,
        "read_room_app_status",
        {"room_id": str(room.pk), "instance_id": str(app.pk)},
    )
    assert not status.is_error, status.content
    assert status.structured_content["packages"] == CHART_PACKAGES
    review = call_tool(
        asgi_server.mcp_url, token, "read_room_proposal", {"proposal_id": str(app.proposal_id)}
    )
    assert review.structured_content["packages"] == CHART_PACKAGES


def test_the_rest_app_status_and_proposal_list_the_packages(
    client, room, owner, agent, stranger, token_factory
):
    app = approved(room, owner, agent)
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token_factory(agent)}"}
    status = client.get(f"/api/v1/rooms/{room.pk}/apps/{app.pk}", **headers)
    assert status.status_code == 200
    assert status.json()["packages"] == CHART_PACKAGES
    assert status.json()["name"] == app.name  # the launcher entry it always was, and more
    review = client.get(f"/api/v1/proposals/{app.proposal_id}", **headers)
    assert review.json()["packages"] == CHART_PACKAGES
    outsider = {"HTTP_AUTHORIZATION": f"Bearer {token_factory(stranger)}"}
    assert client.get(f"/api/v1/rooms/{room.pk}/apps/{app.pk}", **outsider).status_code == 404
