#!/usr/bin/env python3
"""End-to-end test of `besluitbron serve` with the official Python MCP SDK (`mcp` 2.3.0).

Starts `besluitbron-sim fakes` on a free loopback port, starts `besluitbron serve` against
it with a temporary data directory, and then, once per protocol era (`legacy`: the
initialize handshake with an `Mcp-Session-Id`; `2026-07-28`: stateless per-request
metadata), talks MCP over Streamable HTTP to `/mcp/obv`, `/mcp/tk`, `/mcp/rechtspraak`,
`/mcp/opentk`, `/mcp/ori`, `/mcp/ob`, `/mcp/bwb`, `/mcp/cvdr` and `/mcp`:

- tools/list names exactly the tools of the endpoint, each with a description and
  `readOnlyHint: true`;
- every tool is called with valid arguments on its platform endpoint, and its
  `structuredContent` is compared with the fake's own answer, fetched here over HTTP;
- `/mcp` serves every platform (one call each, to keep within the fake's rate limit);
- the Tweede Kamer's debates, each compared with the fake's meetings, members and the real
  VLOS reports it serves: a meeting found by days and kind and by a member who spoke
  (an ambiguous name answered with candidates), a committee debate with a member's faction,
  a minister's function and every interruption attributed to the interrupter, a casco
  report read without error, and a motion submitted in a debate read with `tk_votes`;
- ORI in both of its modes: live against the fake mirror, and retired — a second fakes
  process with `--fault ori:retired=html` behind a second server, whose ORI tools must
  say that ORI was retired and point to `obv_search`;
- an unknown tool (or a tool of the other platform) raises an MCP error, and invalid
  arguments give a result with `isError: true` and a readable message;
- at `/mcp`: the resource, template and prompt lists (with their caching hints in the
  2026-07-28 era), a resource (`besluitbron://tk/factions`, compared with the fake) and a
  resource template (a ruling, compared with its tool) read, a prompt listed and got (and
  refused without a required argument), completions of OpenBesluitvorming keys (compared
  with the fake's sources) and of a court.

Prints one line per check and, last, `N passed, M failed`; exits 1 on any failure.
Builds nothing: the binaries come from `BESLUITBRON_BIN` and `BESLUITBRON_SIM_BIN`
(`scripts/e2e` builds them). Both child processes are always stopped. Every wait has a
time-out and the whole run is bounded by `RUN_TIMEOUT_S`.

The fake OpenBesluitvorming limits each client to 60 units a minute and keys clients by
the rightmost `X-Forwarded-For` entry, else the peer address. The server and this script
both connect from 127.0.0.1, so this script's own requests carry `X-Forwarded-For:
e2e-harness`: they use a bucket of their own and never spend the server's.

`--fakes-only` starts only the fakes and checks this script's own helpers against them
(no server binary needed); useful when the MCP checks fail and the harness is in doubt.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import re
import socket
import sys
import tempfile
import time
import traceback
import urllib.parse
import xml.etree.ElementTree as ET
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
import jsonschema
from mcp import Client, MCPError
from mcp_types import PromptReference, ResourceTemplateReference

RUN_TIMEOUT_S = 130.0
FAKES_START_TIMEOUT_S = 15.0
SERVER_START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 5.0
HTTP_TIMEOUT_S = 10.0
MCP_READ_TIMEOUT_S = 20.0
ENDPOINT_TIMEOUT_S = 45.0
CHECK_TIMEOUT_S = 25.0
MAX_LIST_PAGES = 20

# Progress notifications the SDK's callback saw in `search`, per era (printed at the end).
PROGRESS_SEEN: dict[str, int] = {}

# ChatGPT's search and fetch contract, written from OpenAI's documentation (provenance in
# tests/schemas/README.md).
SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
SEARCH_CONTRACT = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "openai-search.schema.json").read_text()))
FETCH_CONTRACT = jsonschema.Draft202012Validator(json.loads((SCHEMAS / "openai-fetch.schema.json").read_text()))

OBV_TOOLS = {"obv_search", "obv_document", "obv_sources", "obv_status"}
TK_TOOLS = {"tk_search", "tk_document", "tk_document_text", "tk_factions", "tk_committees", "tk_votes", "tk_debates",
            "tk_debate"}
TK_VOTED_CASE = "2025Z17647"
# The committee debate on the MIVD (a real report of the corpus, served by the fake), its
# meeting and its activity number.
TK_MEETING = "29d8cf68-423e-4ae9-b4f0-7e908c7f5311"
TK_ACTIVITY = "2025A04496"
RS_TOOLS = {"rechtspraak_search", "rechtspraak_ruling", "rechtspraak_courts", "rechtspraak_areas", "rechtspraak_procedures"}
ATOM = "{http://www.w3.org/2005/Atom}"
DCTERMS = "{http://purl.org/dc/terms/}"
RS_BUSY_DAY = "2026-11-03"
RS_FOOTNOTES_ECLI = "ECLI:NL:HR:2026:1500"
RS_METADATA_ONLY_ECLI = "ECLI:NL:RBAMS:2026:9999"
OPENTK_TOOLS = {"opentk_search", "opentk_document", "opentk_activity", "opentk_status"}
ORI_TOOLS = {"ori_search", "ori_document", "ori_sources"}
PLATFORMS = ("obv", "tk", "rechtspraak", "opentk", "ori", "ob", "bwb", "cvdr")
OB_TOOLS = {"ob_search", "ob_document"}
BWB_TOOLS = {"bwb_search", "bwb_read"}
BWB_LAW = "BWBR0047001"
CVDR_TOOLS = {"cvdr_search", "cvdr_read"}
EURLEX_TOOLS = {"eurlex_search", "eurlex_read", "eurlex_transposition"}
# The tools `/mcp` lists in place of others; what it stands in for is read from the server
# itself (`Suite.surface`): each platform address's tools that `/mcp` does not list.
STAND_INS = {"search", "fetch", "lists"}
# `search`'s own arguments, which no platform tool's argument of the same name means.
SEARCH_OWN = {"query", "limit"}
CVDR_REGULATION = "CVDR700001"
SRU12 = "{http://www.loc.gov/zing/srw/}"
SRU_NS = {
    "sru": "http://docs.oasis-open.org/ns/search-ws/sruResponse",
    "gzd": "http://standaarden.overheid.nl/sru",
    "ow": "http://standaarden.overheid.nl/wetgeving/",
    "dcterms": "http://purl.org/dc/terms/",
}
MODES = ("legacy", "2026-07-28")
LIST_TTL_MS = 3_600_000
RESOURCES = [
    "besluitbron://guide",
    "besluitbron://obv/sources",
    "besluitbron://tk/factions",
    "besluitbron://tk/committees",
    "besluitbron://rechtspraak/courts",
    "besluitbron://rechtspraak/areas",
    "besluitbron://rechtspraak/procedures",
    "besluitbron://ori/sources",
    # The views (MCP Apps) of the tools listed at /mcp (fetch's draws the debates and
    # regulations it reads; their own views are listed at their platforms' addresses).
    "ui://besluitbron/vote",
    "ui://besluitbron/search",
    "ui://besluitbron/read",
]
TEMPLATES = [
    "besluitbron://obv/document/{id}",
    "besluitbron://tk/document/{id}",
    "besluitbron://rechtspraak/ruling/{id}",
    "besluitbron://opentk/document/{id}",
    "besluitbron://ob/publication/{id}",
    "besluitbron://bwb/regulation/{id}",
    "besluitbron://cvdr/regulation/{id}",
]
PROMPTS = ["gemeenteraad_besluit", "volg_kamerdossier", "rechtspraak_sinds", "officiele_bekendmaking"]
HARNESS_HEADERS = {"X-Forwarded-For": "e2e-harness", "Accept": "application/json"}


class CheckFailed(Exception):
    """A check's expectation did not hold; the message says what differed."""


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_eq(actual: Any, expected: Any, what: str) -> None:
    if actual != expected:
        raise CheckFailed(f"{what}: got {short(actual)}, expected {short(expected)}")


def describe(e: BaseException) -> str:
    """An exception as `Type: message`, with the leaves of an exception group (anyio task groups wrap errors)."""
    if isinstance(e, BaseExceptionGroup):
        return "; ".join(describe(inner) for inner in e.exceptions)
    return f"{type(e).__name__}: {e}"


def short(value: Any, limit: int = 300) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


class SessionEnds(logging.Handler):
    """Keeps the SDK's "Session termination failed" warnings: its DELETE at the end of a
    session was not answered 200/204 (or not at all)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.failures: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if "Session termination failed" in message:
            self.failures.append(message)

    def take(self) -> list[str]:
        taken, self.failures = self.failures, []
        return taken


SESSION_ENDS = SessionEnds()
logging.getLogger("mcp.client.streamable_http").addHandler(SESSION_ENDS)


class Report:
    """Counts checks and prints one line per check."""

    def __init__(self) -> None:
        self.passed = 0
        self.failed = 0

    def ok(self, name: str) -> None:
        self.passed += 1
        print(f"PASS {name}", flush=True)

    def fail(self, name: str, detail: str) -> None:
        self.failed += 1
        print(f"FAIL {name}: {detail}", flush=True)

    async def run(self, name: str, check: Callable[[], Awaitable[None]], timeout_s: float = CHECK_TIMEOUT_S) -> bool:
        """Runs one check under a time-out; returns whether it passed."""
        try:
            with anyio.fail_after(timeout_s):
                await check()
        except CheckFailed as e:
            self.fail(name, str(e))
            return False
        except TimeoutError:
            self.fail(name, f"no answer within {timeout_s:.0f} s")
            return False
        except Exception as e:  # a check that crashes is a failed check, with its cause
            self.fail(name, describe(e))
            if os.environ.get("E2E_TRACEBACK"):
                traceback.print_exc()
            return False
        self.ok(name)
        return True


# ---------------------------------------------------------------------------------------
# The fakes, read directly over HTTP.


class Fakes:
    """Direct HTTP access to the fake platforms: the expected answers."""

    def __init__(
        self, obv: str, tk: str, http: httpx2.AsyncClient, opentk: str = "", ori: str = "", rs: str = "",
        ob: str = "", bwb: str = "", cvdr: str = "",
    ) -> None:
        self.obv = obv
        self.tk = tk
        self.opentk = opentk
        self.ori = ori
        self.rs = rs
        self.ob = ob
        self.bwb = bwb
        self.cvdr = cvdr
        self.http = http

    async def requests(self, platform: str) -> int:
        """How many requests the fake of `platform` has answered (its control route's counter)."""
        origin = urllib.parse.urlsplit(self.obv)
        response = await self.http.get(f"{origin.scheme}://{origin.netloc}/_control/state")
        expect(response.status_code == 200, f"/_control/state answered {response.status_code}")
        return int(response.json()[platform]["requests"])

    # OpenTK ----------------------------------------------------------------------------

    async def opentk_search(self, q: str, soorten: str = "alles") -> dict[str, Any]:
        """The fake's answer to a search, sent as multipart/form-data as the platform reads it."""
        form = {"q": (None, q), "twomonths": (None, "false"), "soorten": (None, soorten)}
        response = await self.http.post(f"{self.opentk}/search", files=form)
        expect(response.status_code == 200, f"POST /search answered {response.status_code}")
        return response.json()

    async def opentk_text(self, path: str) -> tuple[int, str]:
        response = await self.http.get(f"{self.opentk}/{path}")
        return response.status_code, response.text

    # Open Raadsinformatie ------------------------------------------------------------------

    async def ori_search(self, query: str, size: int) -> dict[str, Any]:
        body = {"query": {"bool": {"must": [{"simple_query_string": {"query": query}}]}}, "size": size}
        response = await self.http.post(f"{self.ori}/ori_*,osi_*,owi_*/_search", json=body)
        expect(response.status_code == 200, f"POST _search answered {response.status_code}")
        return response.json()

    async def get_xml(self, url: str, params: list[tuple[str, str]] | None = None) -> ET.Element:
        response = await self.http.get(url, params=params, headers={"Accept": "application/xml"})
        expect(response.status_code == 200, f"GET {response.url} answered {response.status_code}: {response.text[:200]}")
        return ET.fromstring(response.content)

    async def get_json(self, url: str, params: dict[str, Any] | None = None) -> Any:
        response = await self.http.get(url, params=params)
        expect(response.status_code == 200, f"GET {response.url} answered {response.status_code}: {response.text[:200]}")
        return response.json()

    # OpenBesluitvorming --------------------------------------------------------------

    async def obv_sources(self) -> list[dict[str, Any]]:
        return (await self.get_json(f"{self.obv}/api/sources"))["sources"]

    async def obv_status(self) -> dict[str, Any]:
        return await self.get_json(f"{self.obv}/api/status")

    async def obv_search(self, args: dict[str, Any]) -> dict[str, Any]:
        """The fake's answer to the search an `obv_search` call with `args` stands for."""
        names = {
            "query": "query",
            "organization": "organization",
            "entity_type": "entityType",
            "date_from": "dateFrom",
            "date_to": "dateTo",
            "sort": "sort",
            "limit": "limit",
            "offset": "offset",
        }
        params = {names[k]: v for k, v in args.items()}
        return await self.get_json(f"{self.obv}/api/search", params=params)

    def entity_url(self, entity_id: str) -> str:
        return f"{self.obv}/api/entities/{urllib.parse.quote(entity_id, safe='')}"

    async def obv_entity(self, entity_id: str) -> dict[str, Any]:
        return await self.get_json(self.entity_url(entity_id))

    # Tweede Kamer ---------------------------------------------------------------------

    async def tk_page(self, entity_set: str, odata_filter: str, orderby: str | None = None) -> dict[str, Any]:
        params = {"$filter": odata_filter}
        if orderby:
            params["$orderby"] = orderby
        return await self.get_json(f"{self.tk}/{entity_set}", params=params)

    async def tk_next(self, next_link: str) -> dict[str, Any]:
        expect(next_link.startswith(self.tk + "/"), f"nextLink {next_link} is not on {self.tk}")
        return await self.get_json(next_link)

    async def tk_all(self, entity_set: str, odata_filter: str) -> list[dict[str, Any]]:
        """Every record of a filtered set, following `@odata.nextLink` (bounded)."""
        page = await self.tk_page(entity_set, odata_filter)
        rows = list(page["value"])
        for _ in range(MAX_LIST_PAGES):
            link = page.get("@odata.nextLink")
            if not link:
                return rows
            page = await self.tk_next(link)
            rows.extend(page["value"])
        raise CheckFailed(f"{entity_set} did not end within {MAX_LIST_PAGES} pages")

    async def tk_record(self, entity_set: str, guid: str) -> dict[str, Any]:
        return await self.get_json(f"{self.tk}/{entity_set}({guid})")

    # Rechtspraak ----------------------------------------------------------------------

    async def rs_feed(self, params: list[tuple[str, str]]) -> tuple[int, list[str]]:
        """The fake's search feed: the count in its subtitle and the entries' ECLIs."""
        feed = await self.get_xml(f"{self.rs}/uitspraken/zoeken", params)
        subtitle = (feed.findtext(f"{ATOM}subtitle") or "").rsplit(":", 1)[-1].strip()
        return int(subtitle), [(e.findtext(f"{ATOM}id") or "").strip() for e in feed.iter(f"{ATOM}entry")]

    async def rs_list(self, name: str) -> ET.Element:
        return await self.get_xml(f"{self.rs}/Waardelijst/{name}")

    async def rs_court_id(self, abbreviation: str) -> str:
        for c in (await self.rs_list("Instanties")).iter("Instantie"):
            if (c.findtext("Afkorting") or "").strip() == abbreviation:
                return " ".join((c.findtext("Identifier") or "").split())
        raise CheckFailed(f"the fake has no court {abbreviation}")

    async def rs_creator(self, ecli: str) -> str:
        doc = await self.get_xml(f"{self.rs}/uitspraken/content", [("id", ecli)])
        creator = doc.find(f".//{DCTERMS}creator")
        expect(creator is not None, f"{ecli} has no dcterms:creator")
        return (creator.text or "").strip()  # type: ignore[union-attr]


    # Officiële Bekendmakingen ------------------------------------------------------------

    async def ob_sru(self, cql: str, start: int = 1, maximum: int = 10) -> ET.Element:
        """The fake's SRU 2.0 answer to `cql`, as XML."""
        params = {
            "operation": "searchRetrieve",
            "version": "2.0",
            "recordSchema": "gzd",
            "startRecord": str(start),
            "maximumRecords": str(maximum),
            "query": cql,
        }
        response = await self.http.get(self.ob, params=params, headers={"Accept": "application/xml"})
        expect(response.status_code == 200, f"SRU answered {response.status_code}: {response.text[:200]}")
        root = ET.fromstring(response.content)
        expect(root.tag == f"{{{SRU_NS['sru']}}}searchRetrieveResponse", f"SRU root is {root.tag}")
        return root

    async def ob_text(self, url: str) -> str:
        """The text of an XML rendition as the documented reading gives it: metadata
        dropped, the title and every `al` a paragraph, a blank line between them."""
        response = await self.http.get(url, headers={"Accept": "application/xml"})
        expect(response.status_code == 200, f"GET {url} answered {response.status_code}")
        root = ET.fromstring(response.content)
        blocks = ["".join(e.itertext()).strip() for e in root.iter() if e.tag in ("titel", "al")]
        return "\n\n".join(b for b in blocks if b)


    async def bwb_sru(self, cql: str) -> ET.Element:
        """The fake Basiswettenbestand's SRU 1.2 answer to `cql`, as XML."""
        params = {"operation": "searchRetrieve", "version": "1.2", "x-connection": "BWB", "query": cql,
                  "startRecord": "1", "maximumRecords": "50"}
        response = await self.http.get(self.bwb, params=params, headers={"Accept": "application/xml"})
        expect(response.status_code == 200, f"SRU answered {response.status_code}: {response.text[:200]}")
        root = ET.fromstring(response.content)
        expect(root.tag == f"{SRU12}searchRetrieveResponse", f"SRU root is {root.tag}")
        return root

    async def bwb_article(self, law: str, date: str, number: str) -> str:
        """Article `number` of `law` as in force on `date`, read from the toestand the
        search names: `Artikel N`, then each lid as `lidnr al` (or the lone `al`)."""
        root = await self.bwb_sru(f"dcterms.identifier=={law} and overheidbwb.geldigheidsdatum=={date}")
        location = next((e.text for e in root.iter() if e.tag.endswith("}locatie_toestand")), None)
        expect(location is not None, "the record names its toestand")
        response = await self.http.get(location or "", headers={"Accept": "application/xml"})
        expect(response.status_code == 200, f"GET toestand answered {response.status_code}")
        toestand = ET.fromstring(response.content)
        for artikel in toestand.iter("artikel"):
            if (artikel.findtext("kop/nr") or "").strip() != number:
                continue
            lids = artikel.findall("lid")
            lines = [f"{(l.findtext('lidnr') or '').strip()} {(l.findtext('al') or '').strip()}" for l in lids] or [
                (artikel.findtext("al") or "").strip()]
            return "\n".join([f"Artikel {number}", *lines])
        raise CheckFailed(f"the toestand of {law} on {date} has no article {number}")

    async def cvdr_sru(self, cql: str) -> ET.Element:
        """The fake CVDR's SRU 1.2 answer to `cql`, as XML."""
        params = {"operation": "searchRetrieve", "version": "1.2", "x-connection": "cvdr", "query": cql,
                  "startRecord": "1", "maximumRecords": "50"}
        response = await self.http.get(self.cvdr, params=params, headers={"Accept": "application/xml"})
        expect(response.status_code == 200, f"SRU answered {response.status_code}: {response.text[:200]}")
        root = ET.fromstring(response.content)
        expect(root.tag == f"{SRU12}searchRetrieveResponse", f"SRU root is {root.tag}")
        return root

    async def cvdr_text(self, work: str, date: str) -> tuple[str, str]:
        """The versioned id of `work` in force on `date` and its text as read from the XML the
        record names: the aanhef as `Aanhef` and its paragraphs, then per article `Artikel N
        Titel` and each list item as `nr al` (or the lone `al`); parts apart by a blank
        line (the regulation read whole, as platforms/koop/regulation.rs reads it)."""
        root = await self.cvdr_sru(f'workid="{work}" and overheidrg.datumGeldendOp={date}')
        ident = next((e.text for e in root.iter() if e.tag == "{http://purl.org/dc/terms/}identifier"), None)
        location = next((e.text for e in root.iter() if e.tag.endswith("publicatieurl_xml")), None)
        expect(ident is not None and location is not None, "the record names its version and XML")
        response = await self.http.get(location or "", headers={"Accept": "application/xml"})
        expect(response.status_code == 200, f"GET regulation answered {response.status_code}")
        articles = []
        document = ET.fromstring(response.content)
        for aanhef in document.iter("aanhef"):
            articles.append("\n".join(["Aanhef", *((al.text or "").strip() for al in aanhef.iter("al"))]))
        for artikel in document.iter("artikel"):
            heading = " ".join(t for t in ((artikel.findtext("kop/label") or "").strip(),
                                           (artikel.findtext("kop/nr") or "").strip(),
                                           (artikel.findtext("kop/titel") or "").strip()) if t)
            items = artikel.findall("lijst/li")
            lines = [f"{li.get('nr', '').strip()} {(li.findtext('al') or '').strip()}" for li in items] or [
                (artikel.findtext("al") or "").strip()]
            articles.append("\n".join([heading, *lines]))
        return ident or "", "\n\n".join(articles)


def ob_identifiers(root: ET.Element) -> list[str]:
    return [e.text or "" for e in root.iterfind(".//gzd:gzd//ow:owmskern/dcterms:identifier", SRU_NS)]


def ob_count(root: ET.Element) -> int:
    count = root.find("sru:numberOfRecords", SRU_NS)
    expect(count is not None and count.text is not None, "the SRU answer has no numberOfRecords")
    return int(count.text)  # type: ignore[union-attr, arg-type]


def ob_cql(words: list[str]) -> str:
    """The documented query: the collection, every word quoted and AND-joined, newest first."""
    clauses = ['c.product-area=="officielepublicaties"'] + [f'cql.textAndIndexes="{w}"' for w in words]
    return " AND ".join(clauses) + " sortBy dt.available/sort.descending"


def tk_words_filter(words: list[str]) -> str:
    """The documented search: every word in Titel or Onderwerp (OData literals, `'` doubled)."""
    clauses = []
    for word in words:
        literal = "'" + word.replace("'", "''") + "'"
        clauses.append(f"(contains(Titel,{literal}) or contains(Onderwerp,{literal}))")
    return " and ".join(clauses)


def field(record: dict[str, Any], name: str) -> Any:
    """A record field by its OData name, also found in another case or in snake_case."""
    if name in record:
        return record[name]
    wanted = name.lower()
    snake = "".join("_" + c.lower() if c.isupper() and i else c.lower() for i, c in enumerate(name))
    for key, value in record.items():
        if key.lower() == wanted or key == snake:
            return value
    raise CheckFailed(f"record has no field {name}: keys {sorted(record)}")


def ids_of(records: list[dict[str, Any]]) -> list[str]:
    return [str(field(r, "Id")).lower() for r in records]


async def find_documents(fakes: Fakes) -> tuple[str, str, str]:
    """(a long document, a short document, the source key they belong to).

    The fake makes every 97th document about 200 KB long, starting with the first
    document of the first implemented source, and gives long documents 68 pages (short
    ones at most 30): so the first implemented source's documents contain a long one.
    """
    sources = await fakes.obv_sources()
    key = next(s["key"] for s in sources if s["implemented"])
    hits = (await fakes.obv_search({"organization": key, "entity_type": "Document", "limit": 24}))["results"]
    expect(len(hits) >= 2, f"source {key} has {len(hits)} documents")
    by_pages = sorted(hits, key=lambda h: (h["pageCount"] or 0, h["entityId"]))
    long_doc, short_doc = by_pages[-1]["entityId"], by_pages[0]["entityId"]
    expect(by_pages[-1]["pageCount"] >= 60, f"no long document among {key}'s documents")
    return long_doc, short_doc, key


# ---------------------------------------------------------------------------------------
# Child processes.


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def start_fakes(sim_bin: str, log: Path, *faults: str) -> tuple[asyncio.subprocess.Process, dict[str, str]]:
    """Starts `besluitbron-sim fakes` on a free port (with `--fault` settings); returns it
    and {platform: base URL}."""
    fault_args = [arg for f in faults for arg in ("--fault", f)]
    proc = await asyncio.create_subprocess_exec(
        sim_bin,
        "fakes",
        "--listen",
        "127.0.0.1:0",
        *fault_args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=log.open("wb"),
    )
    urls: dict[str, str] = {}
    try:
        with anyio.fail_after(FAKES_START_TIMEOUT_S):
            # One line per platform the fakes serve, then `ready`.
            while True:
                line = (await proc.stdout.readline()).decode().strip()  # type: ignore[union-attr]
                if not line:
                    raise RuntimeError(f"fakes exited before printing their URLs; see {log}")
                if line == "ready":
                    break
                platform, _, url = line.partition(" ")
                expect(url.startswith("http://127.0.0.1:"), f"unexpected line {line!r}")
                urls[platform] = url
        missing = [p for p in PLATFORMS if p not in urls]
        expect(not missing, f"the fakes serve no {missing}")
    except BaseException:
        await stop(proc)
        raise
    return proc, urls


async def start_server(server_bin: str, urls: dict[str, str], data_dir: Path, log: Path) -> tuple[asyncio.subprocess.Process, str]:
    """Starts `besluitbron serve` on a free port; returns it and its base URL."""
    port = free_loopback_port()
    # This harness is one client address making some 500 calls a minute over both eras
    # (every tool, every id form of `fetch`); the client limits (tested in
    # server/tests/limits.rs) are raised above that, as an operator would for one trusted
    # client, so they do not decide which check runs last.
    limits = {
        f"BesluitBron__McpRateLimit__{scope}__{name}": value
        for scope in ("PerSession", "PerAddress", "PerConnector")
        for name, value in (("RequestsPerMinute", "6000"), ("Burst", "1000"))
    }
    proc = await asyncio.create_subprocess_exec(
        server_bin,
        "serve",
        "--listen",
        f"127.0.0.1:{port}",
        "--data-dir",
        str(data_dir),
        # Every platform the fakes serve, so none is asked at its real address.
        *[arg for p, url in urls.items() for arg in ("--platform-url", f"{p}={url}")],
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log.open("wb"),
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, **limits},
    )
    return proc, f"http://127.0.0.1:{port}"


async def wait_healthy(proc: asyncio.subprocess.Process, base: str, http: httpx2.AsyncClient) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if proc.returncode is not None:
            raise CheckFailed(f"server exited with {proc.returncode} before /healthz answered")
        try:
            response = await http.get(f"{base}/healthz", timeout=2.0)
            if response.status_code == 200:
                return
            last = f"HTTP {response.status_code}"
        except httpx2.TransportError as e:
            last = f"{type(e).__name__}"
        await asyncio.sleep(0.1)
    raise CheckFailed(f"/healthz not 200 within {SERVER_START_TIMEOUT_S:.0f} s (last: {last})")


async def stop(proc: asyncio.subprocess.Process | None) -> None:
    """SIGTERM, then SIGKILL after `STOP_TIMEOUT_S`; never raises."""
    if proc is None or proc.returncode is not None:
        return
    try:
        proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
        except asyncio.TimeoutError:
            proc.kill()
            await asyncio.wait_for(proc.wait(), STOP_TIMEOUT_S)
    except (ProcessLookupError, asyncio.TimeoutError):
        pass


def tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


# ---------------------------------------------------------------------------------------
# MCP checks.


def structured(result: Any, tool: str) -> dict[str, Any]:
    """The structured content of a successful call, checked for a text summary too."""
    text = " ".join(getattr(c, "text", "") for c in result.content)
    expect(not result.is_error, f"{tool} returned isError: {text[:300]}")
    expect(isinstance(result.structured_content, dict), f"{tool} has no structuredContent object")
    expect(text.strip() != "", f"{tool} has no text summary")
    return result.structured_content


def with_page(result: Any, tool: str) -> dict[str, Any]:
    """A document tool's structured content with its page of text, which the answer gives
    as text content only (after the summary and a blank line), as `text`."""
    got = dict(structured(result, tool))
    content = "".join(getattr(c, "text", "") for c in result.content)
    got["text"] = content.split("\n\n", 1)[1] if "\n\n" in content else ""
    return got


def page_text(result: Any) -> str:
    """The page of a document's text: the last `text_length` characters of the text content
    (the text is not repeated in the structured content)."""
    length = int((result.structured_content or {}).get("text_length") or 0)
    text = "".join(getattr(c, "text", "") for c in result.content)
    return text[len(text) - length:] if length else ""


def error_text(result: Any) -> str:
    return " ".join(getattr(c, "text", "") for c in result.content).strip()


async def list_all_tools(client: Client) -> list[Any]:
    tools: list[Any] = []
    cursor = None
    for _ in range(MAX_LIST_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise CheckFailed("tools/list did not end")


def schema_arguments(tool: Any) -> dict[str, dict[str, Any]]:
    """A tool's arguments, each with a `$ref` replaced by its definition."""
    schema = tool.input_schema if hasattr(tool, "input_schema") else tool.inputSchema
    defs = schema.get("$defs", {})
    out: dict[str, dict[str, Any]] = {}
    for name, prop in (schema.get("properties") or {}).items():
        prop = dict(prop)
        ref = prop.pop("$ref", None)
        if ref:
            prop = {**defs.get(ref.removeprefix("#/$defs/"), {}), **prop}
        out[name] = prop
    return out


def taken_by(tool: Any, by: Any, by_name: str) -> str:
    """Why `by` (a stand-in) does not take every argument of `tool` with the same type and
    values, or "" when it does."""
    taken = schema_arguments(by)
    problems = []
    for name, own in schema_arguments(tool).items():
        if by_name == "search" and name in SEARCH_OWN:
            continue
        theirs = taken.get(name)
        if theirs is None:
            problems.append(f"{by_name} has no `{name}`")
        elif own.get("type") != theirs.get("type"):
            problems.append(f"{by_name}'s `{name}` is {theirs.get('type')}, not {own.get('type')}")
        elif own.get("enum") and theirs.get("enum") and not set(map(str, own["enum"])) <= set(map(str, theirs["enum"])):
            problems.append(f"{by_name}'s `{name}` lacks values of {own['enum']}")
    return "; ".join(problems)


def check_tool_list(tools: list[Any], expected: set[str]) -> None:
    names = [t.name for t in tools]
    expect_eq(sorted(names), sorted(expected), "tool names")
    for t in tools:
        expect(bool(t.description and t.description.strip()), f"{t.name} has no description")
        hint = t.annotations.read_only_hint if t.annotations else None
        expect(hint is True, f"{t.name} readOnlyHint is {hint!r}")
        expect(isinstance(t.input_schema, dict) and t.input_schema.get("type") == "object", f"{t.name} inputSchema")


def compare_obv_hits(got: dict[str, Any], fake: dict[str, Any], sources: list[dict[str, Any]]) -> None:
    expect_eq(got.get("total"), fake["totalCount"], "total")
    expect_eq(got.get("total_is_exact"), not fake.get("totalIsApproximate", False), "total_is_exact")
    expect_eq(got.get("next_offset") is not None, fake["hasMore"], "next_offset when there is more")
    results = got.get("results")
    expect(isinstance(results, list), "results is not a list")
    expect_eq([r.get("id") for r in results], [h["entityId"] for h in fake["results"]], "entity ids in order")
    expect(all(r.get("tool") == "obv_document" and r.get("platform") == "obv" for r in results), "tool and platform")
    key_of_label = {s["label"]: s["key"] for s in sources}
    for r, h in zip(results, fake["results"]):
        eid = h["entityId"]
        expect_eq(r.get("kind"), h["entityType"], f"{eid} kind")
        expect_eq(r.get("title"), h["title"], f"{eid} title")
        expect_eq(r.get("summary"), h["summary"], f"{eid} summary")
        # The file at its source, else the record's page on openbesluitvorming.nl (the
        # site's own link: its search by the record's source, and `view`).
        page = "https://openbesluitvorming.nl/?" + urllib.parse.urlencode({"organization": eid.split(":")[3], "view": eid})
        expect_eq(r.get("url"), h.get("downloadUrl") or page, f"{eid} url")
        expect(
            r.get("organization") in (h["organization"], key_of_label.get(h["organization"])),
            f"{eid} organization {r.get('organization')!r} is neither {h['organization']!r} nor its key",
        )
        expect(date_matches(r.get("date"), h), f"{eid} date {r.get('date')!r} vs {h['date']!r}/{h['sortDate']!r}")


def without_provenance(text: str) -> str:
    """A tool's text without the note of where its answer came from (`call/rendered.rs`
    `provenance`): the same answer reads alike whether fetched or from the buffer."""
    for note in (" (from BesluitBron's buffer)", " (shared with an identical request in progress)"):
        text = text.replace(note, "")
    return text


def date_matches(got: Any, fake: dict[str, Any]) -> bool:
    """The tool may give the date as the platform's Dutch text or as ISO; either must match."""
    if not isinstance(got, str) or not got:
        return False
    return got == fake["date"] or got.startswith(fake["sortDate"][:10]) or got.replace("T", " ") == fake["sortDate"]


class McpChecks:
    """The checks that need the server, for one protocol mode."""

    def __init__(self, report: Report, fakes: Fakes, base: str, mode: str, docs: tuple[str, str, str]) -> None:
        self.report = report
        self.fakes = fakes
        self.base = base
        self.mode = mode
        self.long_doc, self.short_doc, self.source_key = docs

    def client(self, path: str) -> Client:
        return Client(f"{self.base}{path}", mode=self.mode, read_timeout_seconds=MCP_READ_TIMEOUT_S)

    @contextlib.asynccontextmanager
    async def session(self, path: str):
        """A client of `path` with its session open. The server allows an address a
        bounded number of new sessions a minute and answers the next with 429 and when to
        retry; the suite opens dozens in a minute on a fast machine, so it waits and
        retries as a well-behaved client does (at most ten times)."""
        for attempt in range(10):
            client = self.client(path)
            try:
                await client.__aenter__()
            except Exception as e:
                if "too many new sessions" in describe(e) and attempt < 9:
                    await anyio.sleep(1.1)
                    continue
                raise
            break
        try:
            yield client
        except BaseException:
            if not await client.__aexit__(*sys.exc_info()):
                raise
        else:
            await client.__aexit__(None, None, None)

    async def endpoint(self, path: str, tools: set[str], calls: list[tuple[str, Callable[[Client], Awaitable[None]]]]) -> None:
        prefix = f"[{self.mode}] {path}"
        try:
            with anyio.fail_after(ENDPOINT_TIMEOUT_S):
                async with self.session(path) as client:
                    await self.report.run(f"{prefix} tools/list: exactly {len(tools)} tools, described, read-only",
                                          lambda: self.tools_listed(client, tools))
                    for name, call in calls:
                        await self.report.run(f"{prefix} {name}", lambda call=call: call(client))
            # Leaving the client ended the session (DELETE), in the session era.
            failures = SESSION_ENDS.take()
            if self.mode == "legacy":
                if failures:
                    self.report.fail(f"{prefix} session end", "; ".join(failures))
                else:
                    self.report.ok(f"{prefix} session end: the SDK's DELETE reports no failure")
        except TimeoutError:
            self.report.fail(f"{prefix} session", f"not finished within {ENDPOINT_TIMEOUT_S:.0f} s")
        except Exception as e:  # connecting or closing failed
            self.report.fail(f"{prefix} session", describe(e))

    async def tools_listed(self, client: Client, expected: set[str]) -> None:
        check_tool_list(await list_all_tools(client), expected)

    async def run(self) -> None:
        obv_calls = [
            ("obv_sources matches /api/sources", self.obv_sources),
            ("obv_sources organization_type filter", self.obv_sources_filtered),
            ("obv_status matches /api/status", self.obv_status),
            ("obv_search matches /api/search", self.obv_search),
            ("obv_search with filters matches /api/search", self.obv_search_filtered),
            ("obv_document pages a long document's markdownText", self.obv_document_long),
            ("obv_document returns a short document whole", self.obv_document_short),
            ("unknown tool raises an MCP error", self.unknown_tool),
            ("tk_factions, not listed here, answers by name", self.tk_factions),
            ("a misspelt tool raises an MCP error naming the nearest", self.misspelt_tool),
            ("obv_search limit 500 gives isError with a readable message", self.obv_search_invalid),
        ]
        tk_calls = [
            ("tk_factions matches Fractie", self.tk_factions),
            ("tk_committees matches every Commissie page", self.tk_committees),
            ("tk_search documents and its continuation match Document", self.tk_search_documents),
            ("tk_search cases with soort and dates match Zaak", self.tk_search_cases),
            ("tk_document matches Document(id)", self.tk_document),
            ("tk_votes of a case voted twice matches Zaak?$expand=Besluit and its Stemming rows", self.tk_votes),
            ("tk_document_text reads the PDF in pages and says a scan has no text layer", self.tk_document_text),
            ("tk_debates by kind and days matches the meetings with a report (Vergadering?$expand=Verslag)",
             self.tk_debates),
            ("tk_debates by speaker resolves the name against FractieZetelPersoon first and finds the meetings whose "
             "reports hold their turns", self.tk_debates_by_speaker),
            ("tk_debate of a committee debate: a member with faction, a minister with function, each interruption "
             "attributed to the interrupter as the report nests it", self.tk_debate),
            ("tk_debate of a casco report says it has no speeches yet, without error", self.tk_debate_casco),
            ("a motion submitted in a debate, as tk_debate lists it, is read with tk_votes", self.tk_debate_motion),
            ("unknown tool raises an MCP error", self.unknown_tool),
            ("obv_sources, not listed here, answers by name", self.obv_sources),
            ("tk_search kind 'bogus' gives isError with a readable message", self.tk_search_invalid),
        ]
        rs_calls = [
            ("rechtspraak_courts filter matches /Waardelijst/Instanties", self.rs_courts),
            ("rechtspraak_areas matches every nested Rechtsgebied", self.rs_areas),
            ("rechtspraak_procedures matches /Waardelijst/Proceduresoorten", self.rs_procedures),
            ("rechtspraak_search by court abbreviation matches the feed", self.rs_search_court),
            ("rechtspraak_search pages across the 1000 boundary like the feed", self.rs_search_paging),
            ("rechtspraak_search refuses words (no keyword search)", self.rs_search_words),
            ("rechtspraak_ruling with footnotes and a table matches /uitspraken/content", self.rs_ruling),
            ("rechtspraak_ruling says a metadata-only ECLI has no text", self.rs_ruling_metadata_only),
            ("rechtspraak_ruling of an unpublished ECLI gives isError", self.rs_ruling_missing),
        ]
        opentk_calls = [
            ("opentk_search matches the multipart /search", self.opentk_search),
            ("opentk_search moties says it may be incomplete", self.opentk_search_motions),
            ("opentk_document matches /getdoc", self.opentk_document),
            ("opentk_document of an unknown number is a not-found error", self.opentk_document_missing),
            ("opentk_activity matches /activiteit", self.opentk_activity),
            ("opentk_activity of an unknown number (200 'Found nothing!!') is an error", self.opentk_activity_missing),
            ("opentk_status matches /lastupdates", self.opentk_status),
            ("opentk_search kind 'bogus' gives isError with a readable message", self.opentk_search_invalid),
        ]
        ori_calls = [
            ("ori_search matches _search", self.ori_search),
            ("ori_document gives the document's text", self.ori_document),
            ("ori_sources matches _aliases", self.ori_sources),
            ("ori_search source '../x' gives isError with a readable message", self.ori_search_invalid),
        ]
        ob_calls = [
            ("ob_search matches the SRU answer", self.ob_search),
            ("ob_search pages with offset", self.ob_search_next),
            ("ob_document gives the XML rendition's text", self.ob_document),
            ("ob_search limit 500 gives isError with a readable message", self.ob_search_invalid),
            ("tk_factions, not listed here, answers by name", self.tk_factions),
            ("a misspelt tool raises an MCP error naming the nearest", self.misspelt_tool),
        ]
        bwb_calls = [
            ("bwb_search matches the SRU answer", self.bwb_search),
            ("bwb_read of article 2 on two dates matches the two toestanden", self.bwb_read),
        ]
        cvdr_calls = [
            ("cvdr_search by a municipality's name matches the SRU answer for its code", self.cvdr_search),
            ("cvdr_search organization 'Utrecht' answers with both keys, asking nothing", self.cvdr_search_ambiguous),
            ("cvdr_read on two dates matches the two versions' XML", self.cvdr_read),
        ]
        all_calls = [
            ("obv_sources matches /api/sources", self.obv_sources),
            ("tk_factions matches Fractie", self.tk_factions),
            ("rechtspraak_procedures matches /Waardelijst/Proceduresoorten", self.rs_procedures),
            ("opentk_status matches /lastupdates", self.opentk_status),
            ("ori_sources matches _aliases", self.ori_sources),
            ("ob_search matches the SRU answer", self.ob_search),
            ("lists answers rechtspraak procedures as rechtspraak_procedures does, naming it; refuses an argument "
             "the list does not take", self.lists_procedures),
            ("unknown tool raises an MCP error", self.unknown_tool),
            ("tools/list, resources/list, resources/templates/list, prompts/list (public caching hints in 2026-07-28)",
             self.lists_cached),
            ("resources/read besluitbron://tk/factions matches Fractie", self.resource_factions),
            ("resources/read of the ruling template gives the ruling's text", self.resource_ruling),
            ("resources/read of an unknown URI raises an MCP error", self.resource_unknown),
            ("search answers in ChatGPT's contract from four platforms; fetch reads every result id", self.search_everywhere),
            ("search's progress reaches the SDK's progress callback, every platform, before the result",
             self.search_progress),
            ("fetch reads ECLIs, BWB and CVDR ids and their links as the reading tool does",
             self.fetch_rulings_laws_regulations),
            ("fetch reads publication ids, council records and their links as the reading tool does",
             self.fetch_publications_and_council_records),
            ("fetch reads Kamer numbers, GUIDs, cases, OpenTK ids and their links as the reading tool does",
             self.fetch_parliament),
            ("fetch refuses an unknown form, listing the forms, asking nothing", self.fetch_refuses_what_it_does_not_read),
            ("obv_search organization 'Utrecht' answers with the candidate keys", self.obv_search_name),
            ("obv_search variants share one request; a near-duplicate is asked and counted", self.obv_search_variants),
            ("an unknown address under /mcp/ is 404 with the addresses", self.unknown_address),
            ("prompts/get gemeenteraad_besluit gives a plan naming obv_search first", self.prompt_council),
            ("prompts/get without a required argument raises invalid params", self.prompt_missing),
            ("completion of organization 'utr' offers the Utrecht sources of /api/sources", self.complete_obv),
            ("completion of instantie 'hoge' offers the Hoge Raad", self.complete_court),
        ]
        await self.endpoint("/mcp/obv", OBV_TOOLS, obv_calls)
        await self.endpoint("/mcp/tk", TK_TOOLS, tk_calls)
        await self.endpoint("/mcp/rechtspraak", RS_TOOLS, rs_calls)
        await self.endpoint("/mcp/opentk", OPENTK_TOOLS, opentk_calls)
        await self.endpoint("/mcp/ori", ORI_TOOLS, ori_calls)
        await self.endpoint("/mcp/ob", OB_TOOLS, ob_calls)
        await self.endpoint("/mcp/bwb", BWB_TOOLS, bwb_calls)
        await self.endpoint("/mcp/cvdr", CVDR_TOOLS, cvdr_calls)
        await self.endpoint("/mcp/eurlex", EURLEX_TOOLS, [
            ("eurlex_search by title words finds the act, and eurlex_read reads each one found", self.eurlex_search_read),
        ])
        listed = await self.surface()
        await self.endpoint("/mcp", listed, all_calls)
        # A chosen tool set: /mcp's list and the Tweede Kamer's whole set.
        await self.endpoint("/mcp?toolsets=tk", listed | TK_TOOLS, [])

    async def surface(self) -> set[str]:
        """What `/mcp` lists, read from the server, with its rule checked: the platform
        addresses (those the 404 of an unknown address names) list their platforms' tools;
        `/mcp` lists `search`, `fetch` and `lists` and platform tools only; and every
        platform tool it does not list has its every argument taken by one of those three,
        with the same type and values. Answers `/mcp`'s list (empty when a check failed)."""
        listed: set[str] = set()

        async def check() -> None:
            async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT_S, trust_env=False) as http:
                r = await http.post(f"{self.base}/mcp/nope", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                    headers={"Accept": "application/json, text/event-stream"})
            platforms = sorted(set(re.findall(r"/mcp/([a-z0-9]+)", r.text)))
            expect(len(platforms) >= len(PLATFORMS), f"the addresses the 404 names: {r.text[:300]!r}")
            own: dict[str, Any] = {}
            for platform in platforms:
                async with self.session(f"/mcp/{platform}") as client:
                    own.update({t.name: t for t in await list_all_tools(client)})
            async with self.session("/mcp") as client:
                at_mcp = {t.name: t for t in await list_all_tools(client)}
            expect(STAND_INS <= set(at_mcp), f"/mcp lists {sorted(STAND_INS)}: {sorted(at_mcp)}")
            extra = set(at_mcp) - set(own) - STAND_INS
            expect(not extra, f"/mcp lists tools no platform address lists: {sorted(extra)}")
            stood_in = set(own) - set(at_mcp)
            expect(bool(stood_in), "/mcp stands in for some tools")
            for name in sorted(stood_in):
                problems = [p for p in (taken_by(own[name], at_mcp[by], by) for by in sorted(STAND_INS)) if p]
                expect(len(problems) < len(STAND_INS),
                       f"{name} is not listed at /mcp, and no stand-in takes its every argument: {problems}")
            listed.update(at_mcp)

        await self.report.run(f"[{self.mode}] /mcp stands in only for tools whose every argument a stand-in takes",
                              check)
        return listed

    async def run_retired(self) -> None:
        """Against the server whose ORI is the retired fake."""
        calls = [
            (f"{tool} says ORI was retired and names obv_search", lambda c, t=tool, a=args: self.ori_retired(c, t, a))
            for tool, args in (
                ("ori_search", {"query": "woningbouw"}),
                ("ori_document", {"id": "ori_heemskerk_20250506181303/1001"}),
                ("ori_sources", {}),
            )
        ]
        await self.endpoint("/mcp/ori", ORI_TOOLS, calls)

    # OpenTK ----------------------------------------------------------------------------

    async def opentk_search(self, client: Client) -> None:
        fake = await self.fakes.opentk_search("stikstof")
        got = structured(await client.call_tool("opentk_search", {"query": "stikstof", "limit": 100}), "opentk_search")
        want = [r["nummer"] for r in fake["results"]][:100]
        expect(len(want) > 0, "the fake has no stikstof documents")
        expect_eq([h.get("id") for h in got.get("results", [])], want, "hit numbers, newest first")
        expect_eq(got.get("total"), len(fake["results"]), "total")
        first = got["results"][0]
        expect_eq(first.get("title"), fake["results"][0]["onderwerp"], "subject of the first hit")
        expect("**" in (first.get("snippet") or ""), f"highlight kept readable: {short(first.get('snippet'))}")

    async def opentk_search_motions(self, client: Client) -> None:
        got = structured(await client.call_tool("opentk_search", {"query": "kamer", "kind": "moties"}), "opentk_search")
        expect("280" in (got.get("incomplete") or ""), f"incomplete is {short(got.get('incomplete'))}")

    async def opentk_document(self, client: Client) -> None:
        status, html = await self.fakes.opentk_text("getdoc/2026D10005")
        expect(status == 200, f"getdoc answered {status}")
        got = with_page(await client.call_tool("opentk_document", {"id": "2026D10005"}), "opentk_document")
        expect_eq(got.get("id"), "2026D10005", "id")
        title = html.split("<title>", 1)[1].split("</title>", 1)[0]
        expect_eq(got.get("title"), title, "title")
        expect("Tweede Kamer" in (got.get("text") or ""), f"text: {short(got.get('text'))}")
        expect_eq(got.get("raw_url"), f"{self.fakes.opentk}/getraw/2026D10005", "raw_url")

    async def opentk_document_missing(self, client: Client) -> None:
        result = await client.call_tool("opentk_document", {"id": "2026D99999"})
        message = error_text(result)
        expect(result.is_error is True and "OpenTK" in message and "2026D99999" in message, f"{message[:300]!r}")

    async def opentk_activity(self, client: Client) -> None:
        status, body = await self.fakes.opentk_text("activiteit/2026A00007")
        expect(status == 200, f"activiteit answered {status}")
        fake = json.loads(body)
        got = structured(await client.call_tool("opentk_activity", {"id": "2026A00007"}), "opentk_activity")
        expect_eq(got.get("title"), fake["meta"]["onderwerp"], "title (the subject)")
        expect_eq((got.get("id"), got.get("platform")), ("2026A00007", "opentk"), "id and platform")
        expect_eq(len(got.get("agenda", [])), len(fake["agendapunten"]), "agenda points")
        expect_eq(got.get("commitments"), [t["tekst"] for t in fake["toezeggingen"]], "commitments")
        expect_eq(got.get("video_url"), fake["videourl"], "video_url")

    async def opentk_activity_missing(self, client: Client) -> None:
        status, body = await self.fakes.opentk_text("activiteit/2026A09999")
        expect(status == 200 and body.startswith("Found nothing"), f"the fake answered {status} {body[:40]!r}")
        result = await client.call_tool("opentk_activity", {"id": "2026A09999"})
        message = error_text(result)
        expect(result.is_error is True and "has no activity" in message, f"{message[:300]!r}")

    async def opentk_status(self, client: Client) -> None:
        got = structured(await client.call_tool("opentk_status", {}), "opentk_status")
        fake = await self.fakes.get_json(f"{self.fakes.opentk}/lastupdates")
        expect_eq(sorted(h.get("name") for h in got.get("harvesters", [])), sorted(fake), "harvester names")

    async def opentk_search_invalid(self, client: Client) -> None:
        result = await client.call_tool("opentk_search", {"query": "stikstof", "kind": "bogus"})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("kind" in message, f"message does not name `kind`: {message[:300]!r}")

    # Open Raadsinformatie ------------------------------------------------------------------

    async def ori_search(self, client: Client) -> None:
        fake = await self.fakes.ori_search("woningbouw", 20)
        got = structured(await client.call_tool("ori_search", {"query": "woningbouw", "limit": 20}), "ori_search")
        want = [f"{h['_index']}/{h['_id']}" for h in fake["hits"]["hits"]]
        expect(len(want) > 0, "the fake has no woningbouw documents")
        expect_eq([h.get("id") for h in got.get("results", [])], want, "hit ids")
        expect_eq(got.get("total"), fake["hits"]["total"]["value"], "total")

    async def ori_document(self, client: Client) -> None:
        result = await client.call_tool("ori_document", {"id": "ori_heemskerk_20250506181303/1001", "length": 100000})
        got = structured(result, "ori_document")
        doc = await self.fakes.get_json(f"{self.fakes.ori}/ori_heemskerk_20250506181303/_doc/1001")
        expect_eq(page_text(result), "\n\n".join(doc["_source"]["text"]), "text")
        expect_eq(got.get("title"), doc["_source"]["name"], "title (the name)")

    async def ori_sources(self, client: Client) -> None:
        got = structured(await client.call_tool("ori_sources", {}), "ori_sources")
        aliases = await self.fakes.get_json(f"{self.fakes.ori}/_aliases")
        live = sorted(a for entry in aliases.values() for a in entry["aliases"])
        expect_eq(sorted(s.get("id") for s in got.get("results", [])), live, "sources (aliases)")

    async def ori_search_invalid(self, client: Client) -> None:
        result = await client.call_tool("ori_search", {"query": "x", "source": "../x"})
        message = error_text(result)
        expect(result.is_error is True and "source" in message, f"{message[:300]!r}")

    async def ori_retired(self, client: Client, tool: str, args: dict[str, Any]) -> None:
        result = await client.call_tool(tool, args)
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("retired on 1 November 2026" in message and "obv_search" in message, f"{message[:300]!r}")

    # OpenBesluitvorming ----------------------------------------------------------------

    async def obv_sources(self, client: Client) -> None:
        got = structured(await client.call_tool("obv_sources", {"limit": 400}), "obv_sources")
        fake = await self.fakes.obv_sources()
        expect_eq(got.get("total"), len(fake), "total")
        expect_eq(sorted(s.get("id") for s in got.get("results", [])), sorted(s["key"] for s in fake), "source keys")
        by_key = {s["key"]: s for s in fake}
        for s in got["results"]:
            f = by_key[s["id"]]
            expect_eq((s.get("title"), s.get("kind"), s.get("implemented")),
                      (f["label"], f["organizationType"], f["implemented"]), f"source {s['id']}")

    async def obv_sources_filtered(self, client: Client) -> None:
        got = structured(await client.call_tool("obv_sources", {"organization_type": "province"}), "obv_sources")
        fake = [s for s in await self.fakes.obv_sources() if s["organizationType"] == "province"]
        expect(len(fake) > 0, "the fake has no provinces")
        expect_eq(got.get("total"), len(fake), "total")
        expect_eq(sorted(s.get("id") for s in got.get("results", [])), sorted(s["key"] for s in fake), "source keys")

    async def obv_status(self, client: Client) -> None:
        fake = await self.fakes.obv_status()
        states: dict[str, Any] = {}
        offset: Any = 0
        while offset is not None:
            got = structured(
                await client.call_tool("obv_status", {"state": "any", "limit": 100, "offset": offset}), "obv_status"
            )
            states.update({s.get("id"): (s.get("state"), s.get("last_success_at")) for s in got["results"]})
            offset = got.get("next_offset")
        expect_eq(got.get("generated_at"), fake["generatedAt"], "generated_at")
        expect_eq(states, {s["sourceKey"]: (s["state"], s["lastSuccessAt"]) for s in fake["sources"]},
                  "state and last_success_at per source")
        default = structured(await client.call_tool("obv_status", {}), "obv_status")
        expect_eq(default.get("total"), sum(1 for s in fake["sources"] if s["state"] != "ok"), "not ok by default")
        expect_eq(len(got.get("suppliers", [])), len(fake["suppliers"]), "supplier count")
        one = structured(await client.call_tool("obv_status", {"source": self.source_key}), "obv_status")
        expect_eq([s.get("id") for s in one.get("results", [])], [self.source_key], "sources with source=")

    async def obv_search(self, client: Client) -> None:
        args = {"query": "fietspad", "sort": "date_desc", "limit": 5}
        got = structured(await client.call_tool("obv_search", args), "obv_search")
        fake = await self.fakes.obv_search(args)
        expect(fake["totalCount"] > 5, "the fake should have more than 5 hits for fietspad")
        compare_obv_hits(got, fake, await self.fakes.obv_sources())

    async def obv_search_filtered(self, client: Client) -> None:
        args = {
            "organization": self.source_key,
            "entity_type": "Document",
            "date_from": "2023-01-01",
            "date_to": "2026-12-31",
            "sort": "date_asc",
            "limit": 3,
            "offset": 1,
        }
        got = structured(await client.call_tool("obv_search", args), "obv_search")
        fake = await self.fakes.obv_search(args)
        expect(len(fake["results"]) == 3, f"the fake gave {len(fake['results'])} hits")
        compare_obv_hits(got, fake, await self.fakes.obv_sources())

    async def obv_document_long(self, client: Client) -> None:
        entity = await self.fakes.obv_entity(self.long_doc)
        text = entity["markdownText"]
        expect(len(text) > 100_000, f"the long document has only {len(text)} characters")
        first = with_page(await client.call_tool("obv_document", {"id": self.long_doc}), "obv_document")
        expect_eq(first.get("id"), self.long_doc, "id")
        expect_eq(first.get("kind"), "Document", "kind")
        expect_eq(first.get("title"), entity["title"], "title")
        expect_eq(first.get("total_length"), len(text), "total_length (characters)")
        expect_eq(first.get("text_offset"), 0, "text_offset")
        expect_eq(first.get("text"), text[:8_000], "text of the default first page (8000 characters)")
        expect_eq(first.get("has_more"), True, "has_more")
        expect_eq(first.get("next_offset"), 8_000, "next_offset")
        args = {"id": self.long_doc, "offset": 20_000, "length": 1_000}
        second = with_page(await client.call_tool("obv_document", args), "obv_document")
        expect_eq(second.get("text_offset"), 20_000, "text_offset")
        expect_eq(second.get("text"), text[20_000:21_000], "text at offset 20000, length 1000")
        expect_eq(second.get("has_more"), True, "has_more")
        tail_args = {"id": self.long_doc, "offset": len(text) - 10, "length": 100}
        last = with_page(await client.call_tool("obv_document", tail_args), "obv_document")
        expect_eq(last.get("text"), text[-10:], "the last 10 characters")
        expect_eq(last.get("has_more"), False, "has_more at the end")

    async def obv_document_short(self, client: Client) -> None:
        entity = await self.fakes.obv_entity(self.short_doc)
        text = entity["markdownText"]
        got = with_page(
            await client.call_tool("obv_document", {"id": self.short_doc, "length": 100_000}), "obv_document"
        )
        expect_eq(got.get("id"), self.short_doc, "id")
        expect_eq(got.get("text"), text, "whole markdownText")
        expect_eq(got.get("total_length"), len(text), "total_length")
        expect_eq(got.get("has_more"), False, "has_more")

    async def obv_search_invalid(self, client: Client) -> None:
        result = await client.call_tool("obv_search", {"query": "fietspad", "limit": 500})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("limit" in message.lower(), f"message does not name `limit`: {message[:300]!r}")
        expect(len(message) < 2_000, f"message is {len(message)} characters long")

    async def search_everywhere(self, client: Client) -> None:
        result = await client.call_tool("search", {"query": "stikstof", "limit": 2})
        got = structured(result, "search")
        # ChatGPT's contract: one text item, the JSON of the structured content, which the
        # schema written from OpenAI's documentation accepts.
        expect_eq(len(result.content), 1, "content items")
        expect_eq(json.loads(result.content[0].text), got, "search's text item is its structured content")
        problems = [e.message for e in SEARCH_CONTRACT.iter_errors(got)][:3]
        expect(not problems, f"outside ChatGPT's search contract: {problems}")
        groups = {g["platform"]: g for g in got.get("platforms", [])}
        answered = [p for p, g in groups.items() if g.get("status") == "ok" and g.get("shown")]
        expect(len(answered) >= 4, f"platforms with results: {answered}; all: {short(groups, 600)}")
        expect_eq(groups.get("rechtspraak", {}).get("status"), "no_keyword_search", "rechtspraak")
        results = got.get("results", [])
        for platform in answered:
            mine = [r for r in results if r.get("platform") == platform]
            expect_eq(len(mine), groups[platform]["shown"], f"{platform}: its results in the list")
        for r in results:
            expect("date" not in r or re.fullmatch(r"\d{4}-\d{2}-\d{2}", r["date"]) is not None, f"a day: {r}")
            expect("url" not in r or r["url"].startswith(("http://", "https://")), f"a web link: {r}")
            if r.get("platform") in ("tk", "obv"):
                expect(bool(r.get("url")), f"a Kamer or OpenBesluitvorming result links its page: {r}")
        # fetch reads every result's id as it is given, on the result's own platform.
        for r in results:
            fetched = await client.call_tool("fetch", {"id": r["id"]})
            if fetched.is_error and "no text layer" in error_text(fetched):
                continue  # a scan: the reading tool's own honest answer, passed on unchanged
            expect(fetched.is_error is not True, f"fetch {r['id']}: {error_text(fetched)[:200]!r}")
            shown = structured(fetched, "fetch")
            expect_eq(shown.get("metadata", {}).get("platform"), r["platform"], f"fetch {r['id']}'s platform")
            expect(bool(shown.get("title")) and "text" in shown, f"fetch's shape: {short(shown, 300)}")
            expect_eq(json.loads(fetched.content[0].text), shown, "fetch's text item is its structured content")
            problems = [e.message for e in FETCH_CONTRACT.iter_errors(shown)][:3]
            expect(not problems, f"fetch {r['id']}: outside ChatGPT's fetch contract: {problems}")
            # The platform's own reading tool reads the same id.
            opened = await client.call_tool(r["tool"], {"id": r["id"]})
            expect(opened.is_error is not True, f"{r['tool']} {r['id']}: {error_text(opened)[:200]!r}")

    # fetch: every id and link form, its text the reading tool's ---------------------------

    async def fetch_reads_as_the_tool(self, client: Client, cases: list[tuple[str, str, dict[str, Any]]]) -> None:
        """Each (id or link, reading tool, its arguments): `fetch` reads it on the tool's
        platform, in ChatGPT's contract, its text exactly what the tool gives (but for the
        note of where it came from: the tool's call fetched it, `fetch` finds it in the
        buffer). The tool is asked once per set of arguments (the session's request limit)."""
        texts: dict[str, str] = {}
        for given, tool, args in cases:
            key = json.dumps([tool, args], sort_keys=True)
            if key not in texts:
                own = await client.call_tool(tool, args)
                expect(own.is_error is not True, f"{tool} {args}: {error_text(own)[:200]!r}")
                texts[key] = "\n".join(c.text for c in own.content if getattr(c, "text", None) is not None)
            fetched = await client.call_tool("fetch", {"id": given})
            expect(fetched.is_error is not True, f"fetch {given!r}: {error_text(fetched)[:200]!r}")
            shown = structured(fetched, "fetch")
            expect_eq(shown.get("metadata", {}).get("tool"), tool, f"fetch {given!r} reads with")
            expect_eq(without_provenance(shown.get("text", "")), without_provenance(texts[key]),
                      f"fetch {given!r}'s text is {tool}'s")
            expect_eq(json.loads(fetched.content[0].text), shown, f"fetch {given!r}: its text item")
            problems = [e.message for e in FETCH_CONTRACT.iter_errors(shown)][:3]
            expect(not problems, f"fetch {given!r}: outside ChatGPT's fetch contract: {problems}")

    async def fetch_rulings_laws_regulations(self, client: Client) -> None:
        ecli, law, day = RS_FOOTNOTES_ECLI, BWB_LAW, "2025-08-01"
        await self.fetch_reads_as_the_tool(client, [
            (ecli, "rechtspraak_ruling", {"id": ecli}),
            (f"https://uitspraken.rechtspraak.nl/details?id={ecli}", "rechtspraak_ruling", {"id": ecli}),
            (f"https://data.rechtspraak.nl/uitspraken/content?id={ecli}", "rechtspraak_ruling", {"id": ecli}),
            (f"rechtspraak:{ecli}", "rechtspraak_ruling", {"id": ecli}),
            (law, "bwb_read", {"id": law}),
            (f"{law}@{day}", "bwb_read", {"id": law, "date": day}),
            (f"{law}#2", "bwb_read", {"id": law, "article": "2"}),
            (f"https://wetten.overheid.nl/{law}/{day}#Artikel2", "bwb_read", {"id": law, "date": day, "article": "2"}),
            (f"wetten.overheid.nl/jci1.3:c:{law}&artikel=2", "bwb_read", {"id": law, "article": "2"}),
            (CVDR_REGULATION, "cvdr_read", {"id": CVDR_REGULATION}),
            (f"{CVDR_REGULATION}_2", "cvdr_read", {"id": f"{CVDR_REGULATION}_2"}),
            (f"{CVDR_REGULATION}_2#2", "cvdr_read", {"id": f"{CVDR_REGULATION}_2", "article": "2"}),
            (f"https://lokaleregelgeving.overheid.nl/{CVDR_REGULATION}/2", "cvdr_read", {"id": f"{CVDR_REGULATION}_2"}),
        ])

    async def fetch_publications_and_council_records(self, client: Client) -> None:
        pub = "gmb-2026-10000"
        page = "https://openbesluitvorming.nl/?" + urllib.parse.urlencode(
            {"organization": self.short_doc.split(":")[3], "view": self.short_doc})
        await self.fetch_reads_as_the_tool(client, [
            (pub, "ob_document", {"id": pub}),
            (f"https://zoek.officielebekendmakingen.nl/{pub}.html", "ob_document", {"id": pub}),
            (f"https://repository.overheid.nl/frbr/officielepublicaties/gmb/2026/{pub}/1/xml/{pub}.xml", "ob_document",
             {"id": pub}),
            (self.short_doc, "obv_document", {"id": self.short_doc}),
            (page, "obv_document", {"id": self.short_doc}),
            (f"obv:{self.short_doc}", "obv_document", {"id": self.short_doc}),
        ])

    async def fetch_parliament(self, client: Client) -> None:
        # A document whose text the Kamer's tool reads (a scan has none: its own answer).
        page = await self.fakes.tk_page("Document", tk_words_filter(["asiel"]) + " and Verwijderd eq false")
        guid, number = "", ""
        for record in page["value"]:
            if not (await client.call_tool("tk_document_text", {"id": record["Id"]})).is_error:
                guid, number = record["Id"], record["DocumentNummer"]
                break
        expect(bool(guid), "a Kamer document with a text")
        await self.fetch_reads_as_the_tool(client, [
            (number, "tk_document_text", {"id": number}),
            (f"https://www.tweedekamer.nl/kamerstukken/detail?id={number}&did={number}", "tk_document_text",
             {"id": number}),
            (guid, "tk_document_text", {"id": guid}),
            (f"https://www.tweedekamer.nl/downloads/document?id={guid}", "tk_document_text", {"id": guid}),
            (f"https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Document({guid})", "tk_document_text", {"id": guid}),
            (TK_VOTED_CASE, "tk_votes", {"id": TK_VOTED_CASE}),
            (f"https://www.tweedekamer.nl/kamerstukken/detail?id={TK_VOTED_CASE}", "tk_votes", {"id": TK_VOTED_CASE}),
            ("opentk:2026D10005", "opentk_document", {"id": "2026D10005"}),
            ("https://berthub.eu/tkconv/document.html?nummer=2026D10005", "opentk_document", {"id": "2026D10005"}),
            ("opentk:2026A00007", "opentk_activity", {"id": "2026A00007"}),
            (f"vergadering:{TK_MEETING}", "tk_debate", {"id": f"vergadering:{TK_MEETING}"}),
            (f"https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Vergadering({TK_MEETING})", "tk_debate",
             {"id": f"vergadering:{TK_MEETING}"}),
            (TK_ACTIVITY, "tk_debate", {"id": TK_ACTIVITY}),
            (f"https://www.tweedekamer.nl/debat_en_vergadering/commissievergaderingen/details?id={TK_ACTIVITY}",
             "tk_debate", {"id": TK_ACTIVITY}),
        ])

    async def fetch_refuses_what_it_does_not_read(self, client: Client) -> None:
        before = {p: await self.fakes.requests(p) for p in ("tk", "ob", "bwb")}
        result = await client.call_tool("fetch", {"id": "hello world"})
        message = error_text(result)
        expect(result.is_error is True and "ECLI" in message and "platform:id" in message, f"{message[:300]!r}")
        expect_eq({p: await self.fakes.requests(p) for p in before}, before, "nothing asked of any platform")

    async def search_progress(self, client: Client) -> None:
        """The Python SDK's progress callback: one call per platform asked, in order, the
        last "N of N", every one before the result."""
        seen: list[tuple[float, float | None, str | None]] = []
        done = False

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            expect(not done, f"a progress notification after the result: {progress} of {total}")
            seen.append((progress, total, message))

        word = {"legacy": "parkeren"}.get(self.mode, "fietspad")
        result = await client.call_tool("search", {"query": word, "limit": 1}, progress_callback=on_progress)
        done = True
        got = structured(result, "search")
        asked = [p for p in got.get("platforms", []) if p.get("status") != "no_keyword_search"]
        expect(len(asked) >= 4, f"platforms asked: {short(got.get('platforms'))}")
        expect_eq([(p, t) for p, t, _ in seen], [(float(i + 1), float(len(asked))) for i in range(len(asked))],
                  "progress, total of each notification")
        expect(all(m and "answered" in m for _, _, m in seen), f"messages: {[m for _, _, m in seen]}")
        PROGRESS_SEEN[self.mode] = len(seen)

    async def near_duplicates(self) -> float:
        """besluitbron_near_duplicates_total of obv_search, from /metrics."""
        async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT_S, trust_env=False) as http:
            text = (await http.get(f"{self.base}/metrics")).text
        series = 'besluitbron_near_duplicates_total{platform="obv",tool="obv_search"} '
        return next((float(line[len(series):]) for line in text.splitlines() if line.startswith(series)), 0.0)

    async def obv_search_variants(self, client: Client) -> None:
        # Words of this era only: the server and its buffer serve both eras.
        place = {"legacy": "Soest"}.get(self.mode, "Amersfoort")
        before = await self.fakes.requests("obv")
        first = structured(await client.call_tool("obv_search", {"query": f"Begroting, {place}", "limit": 3}), "obv_search")
        expect_eq(await self.fakes.requests("obv"), before + 1, "the first form reaches the fake")
        async with self.session("/mcp/obv") as other:  # another session (legacy era) or connection
            variant = structured(await other.call_tool("obv_search", {"query": f"{place.lower()}  begroting", "limit": 3}),
                                 "obv_search")
        expect_eq(await self.fakes.requests("obv"), before + 1, "the variant came from the buffer")
        expect_eq(variant.get("results"), first.get("results"), "the variant's results")
        # A near-duplicate (stop words, a plural) is asked again, and counted.
        near = await self.near_duplicates()
        await client.call_tool("obv_search", {"query": f"de begrotingen van {place}", "limit": 3})
        expect_eq(await self.fakes.requests("obv"), before + 2, "the near-duplicate reaches the fake")
        expect_eq(await self.near_duplicates(), near + 1, "near_duplicates counted")

    async def obv_search_name(self, client: Client) -> None:
        await client.call_tool("obv_sources", {})  # the reference list names are resolved against
        before = await self.fakes.requests("obv")
        result = await client.call_tool("obv_search", {"query": "fietsparkeren", "organization": "Utrecht"})
        expect_eq(await self.fakes.requests("obv"), before, "requests at the fake OpenBesluitvorming")
        message = error_text(result)
        # An answer naming the candidates, with the structured content its schema promises.
        got = structured(result, "obv_search")
        keys = [c.get("id") for c in got.get("candidates", [])]
        expect("gemeente-utrecht" in keys and "provincie-utrecht" in keys, f"candidates: {keys}")
        expect_eq(got.get("results"), [], "no search, no results")
        expect("gemeente-utrecht" in message and "provincie-utrecht" in message and "nothing was asked" in message,
               f"{message[:300]!r}")
        named = structured(await client.call_tool("obv_search", {"query": "begroting", "organization": "Gemeente Utrecht", "limit": 2}),
                           "obv_search")
        expect(isinstance(named.get("results"), list), f"a search: {short(named)}")

    async def unknown_address(self, client: Client) -> None:
        async with httpx2.AsyncClient(timeout=HTTP_TIMEOUT_S, trust_env=False) as http:
            for path in ("/mcp/nope", "/mcp/OBV", "/mcp/obv/extra"):
                r = await http.post(f"{self.base}{path}", json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                                    headers={"Accept": "application/json, text/event-stream"})
                expect_eq(r.status_code, 404, f"POST {path}")
                expect("/mcp/obv" in r.text and "/mcp/tk" in r.text, f"{path}: {r.text[:200]!r}")

    async def unknown_tool(self, client: Client, name: str = "no_such_tool") -> None:
        try:
            result = await client.call_tool(name, {})
        except MCPError as e:
            expect(bool(e.message), "the MCP error has no message")
            return
        raise CheckFailed(f"no MCP error; got isError={result.is_error} {error_text(result)[:200]!r}")

    async def misspelt_tool(self, client: Client) -> None:
        try:
            result = await client.call_tool("obv_serch", {})
        except MCPError as e:
            expect("obv_search" in e.message, f"the error names no nearest tool: {e.message!r}")
            return
        raise CheckFailed(f"no MCP error; got isError={result.is_error} {error_text(result)[:200]!r}")

    # Resources, prompts, completions -----------------------------------------------------

    async def lists_cached(self, client: Client) -> None:
        tools = await client.list_tools(cache_mode="bypass")
        resources = await client.list_resources(cache_mode="bypass")
        templates = await client.list_resource_templates(cache_mode="bypass")
        prompts = await client.list_prompts(cache_mode="bypass")
        # The hints are of the 2026-07-28 era (SEP-2549); the SDK's legacy models carry none.
        if self.mode != "legacy":
            for what, result in (("tools", tools), ("resources", resources), ("templates", templates), ("prompts", prompts)):
                expect_eq((result.ttl_ms, result.cache_scope), (LIST_TTL_MS, "public"), f"{what} caching hints")
        expect_eq([r.uri for r in resources.resources], RESOURCES, "resource URIs")
        expect_eq([t.uri_template for t in templates.resource_templates], TEMPLATES, "template URIs")
        expect_eq([p.name for p in prompts.prompts], PROMPTS, "prompt names")
        for p in prompts.prompts:
            expect(bool(p.title and p.description), f"{p.name} has a title and a description")

    async def resource_factions(self, client: Client) -> None:
        result = await client.read_resource("besluitbron://tk/factions", cache_mode="bypass")
        expect_eq(len(result.contents), 1, "contents")
        content = result.contents[0]
        expect_eq(content.mime_type, "application/json", "mimeType")
        got = json.loads(content.text)
        fake = await self.fakes.tk_all("Fractie", "Verwijderd eq false")
        expect_eq(sorted(ids_of(got.get("results", []))), sorted(ids_of(fake)), "faction ids")

    async def resource_ruling(self, client: Client) -> None:
        uri = f"besluitbron://rechtspraak/ruling/{RS_FOOTNOTES_ECLI}"
        result = await client.read_resource(uri, cache_mode="bypass")
        content = result.contents[0]
        expect_eq((content.uri, content.mime_type), (uri, "text/plain"), "uri and mimeType")
        tool = await client.call_tool("rechtspraak_ruling", {"id": RS_FOOTNOTES_ECLI})
        expect_eq(content.text.strip(), error_text(tool), "the text of rechtspraak_ruling")
        expect(RS_FOOTNOTES_ECLI in content.text, "the ECLI is in the text")

    async def resource_unknown(self, client: Client) -> None:
        try:
            result = await client.read_resource("besluitbron://tk/nothing", cache_mode="bypass")
        except MCPError as e:
            expect(e.code in (-32002, -32602), f"code {e.code}")
            expect("resources/list" in e.message, f"message {e.message!r}")
            return
        raise CheckFailed(f"no MCP error; got {short(result)}")

    async def prompt_council(self, client: Client) -> None:
        listed = {p.name: p for p in (await client.list_prompts()).prompts}
        arguments = {a.name: a.required for a in listed["gemeenteraad_besluit"].arguments or []}
        expect_eq(arguments, {"organization": True, "onderwerp": True, "sinds": False}, "arguments")
        result = await client.get_prompt("gemeenteraad_besluit", {"organization": self.source_key, "onderwerp": "woningbouw"})
        text = result.messages[0].content.text
        expect(self.source_key in text and "woningbouw" in text, f"the arguments are in the plan: {text[:200]!r}")
        expect(text.index("obv_search") < text.index("obv_document"), "obv_search before obv_document")

    async def prompt_missing(self, client: Client) -> None:
        try:
            result = await client.get_prompt("gemeenteraad_besluit", {"organization": self.source_key})
        except MCPError as e:
            expect_eq(e.code, -32602, "code")
            expect("onderwerp" in e.message, f"message {e.message!r}")
            return
        raise CheckFailed(f"no MCP error; got {short(result)}")

    async def complete_obv(self, client: Client) -> None:
        result = await client.complete(PromptReference(name="gemeenteraad_besluit"), {"name": "organization", "value": "utr"})
        fake = await self.fakes.obv_sources()
        expected = {s["key"] for s in fake if "utr" in s["key"].lower() or "utr" in s["label"].lower()}
        expect(0 < len(expected) <= 100, f"{len(expected)} Utrecht sources in the fake")
        expect_eq(set(result.completion.values), expected, "completion values")
        expect_eq((result.completion.total, result.completion.has_more), (len(expected), False), "total, hasMore")
        expect("gemeente-utrecht" in result.completion.values, "gemeente-utrecht is offered")

    async def complete_court(self, client: Client) -> None:
        result = await client.complete(PromptReference(name="rechtspraak_sinds"), {"name": "instantie", "value": "hoge"})
        expect(result.completion.values[:1] == ["Hoge Raad"], f"values {short(result.completion.values)}")
        none = await client.complete(ResourceTemplateReference(uri="besluitbron://tk/document/{id}"), {"name": "id", "value": "7"})
        expect_eq(none.completion.values, [], "a document id has no completion")

    # Tweede Kamer ------------------------------------------------------------------------

    async def tk_factions(self, client: Client) -> None:
        got = structured(await client.call_tool("tk_factions", {}), "tk_factions")
        fake = await self.fakes.tk_all("Fractie", "Verwijderd eq false")
        expect_eq(got.get("total"), len(fake), "total")
        expect_eq(sorted(ids_of(got.get("results", []))), sorted(ids_of(fake)), "faction ids")
        names = {str(f["id"]).lower(): f.get("abbreviation") for f in got["results"]}
        expect_eq(names, {str(f["Id"]).lower(): f["Afkorting"] for f in fake}, "Afkorting per faction")

    async def tk_committees(self, client: Client) -> None:
        got = structured(await client.call_tool("tk_committees", {"limit": 300}), "tk_committees")
        fake = await self.fakes.tk_all("Commissie", "Verwijderd eq false")
        expect(len(fake) > 250, f"the fake's committees fit one page ({len(fake)})")
        expect_eq(got.get("total"), len(fake), "total")
        expect_eq(sorted(ids_of(got.get("results", []))), sorted(ids_of(fake)), "committee ids")

    async def tk_search_documents(self, client: Client) -> None:
        odata_filter = tk_words_filter(["stikstof"]) + " and Verwijderd eq false"
        fake = await self.fakes.tk_page("Document", odata_filter, "Datum desc")
        expect("@odata.nextLink" in fake, "the fake's stikstof documents fit one page")
        got = structured(await client.call_tool("tk_search", {"query": "stikstof", "limit": 250}), "tk_search")
        expect_eq(ids_of(got.get("results", [])), ids_of(fake["value"]), "ids of the first page, newest first")
        first = got["results"][0]
        want_title = fake["value"][0]["Titel"] or fake["value"][0]["Onderwerp"]
        expect_eq(first.get("title"), want_title, "title of the first result")
        expect(all(r.get("tool") == "tk_document" for r in got["results"]), "documents read with tk_document")
        expect_eq(got.get("next_offset"), 250, "next_offset")
        args = {"query": "stikstof", "offset": got["next_offset"], "limit": 250}
        second = structured(await client.call_tool("tk_search", args), "tk_search")
        fake_next = await self.fakes.tk_next(fake["@odata.nextLink"])
        expect_eq(ids_of(second.get("results", [])), ids_of(fake_next["value"]), "ids of the second page")

    async def tk_search_cases(self, client: Client) -> None:
        odata_filter = (
            tk_words_filter(["klimaat"])
            + " and Soort eq 'Motie' and GestartOp ge 2024-01-01 and GestartOp le 2024-12-31 and Verwijderd eq false"
        )
        fake = await self.fakes.tk_all("Zaak", odata_filter)
        expect(len(fake) > 0, "the fake has no klimaat motions in 2024")
        args = {"query": "klimaat", "kind": "cases", "soort": "Motie", "date_from": "2024-01-01", "date_to": "2024-12-31"}
        got = structured(await client.call_tool("tk_search", args), "tk_search")
        results = got.get("results", [])
        expect_eq(sorted(r["id"] for r in results), sorted(c["Nummer"] for c in fake), "case numbers")
        expect(all(r.get("kind") == "Motie" and r.get("tool") == "tk_votes" for r in results), "a result is not a Motie")
        expect(got.get("next_offset") is None, f"unexpected next_offset {got.get('next_offset')}")

    async def tk_document(self, client: Client) -> None:
        page = await self.fakes.tk_page("Document", tk_words_filter(["asiel"]) + " and Verwijderd eq false")
        guid = page["value"][0]["Id"]
        fake = await self.fakes.tk_record("Document", guid)
        got = structured(await client.call_tool("tk_document", {"id": guid}), "tk_document")
        for mine, theirs in (("id", "Id"), ("kind", "Soort"), ("number", "DocumentNummer"), ("subject", "Onderwerp")):
            expect_eq(got.get(mine), fake[theirs], f"document {mine} ({theirs})")
        expect_eq(got.get("title"), fake["Titel"] or fake["Onderwerp"], "document title")
        expect_eq(got.get("date"), (fake["Datum"] or "")[:10] or None, "document date")
        record_url = f"{self.fakes.tk}/Document({guid})"
        expect_eq(got.get("record_url"), record_url, "record_url")
        expect_eq(got.get("url"), record_url + "/resource", "url (the file)")

    async def tk_votes(self, client: Client) -> None:
        results = await self.votes_match_the_fake(client, TK_VOTED_CASE)
        expect(any(r["roll_call"] for r in results), "the case has a roll call")

    async def votes_match_the_fake(self, client: Client, number: str) -> list[dict[str, Any]]:
        """tk_votes of the case `number` against the fake's Zaak?$expand=Besluit and Stemming rows."""
        case = await self.fakes.get_json(
            f"{self.fakes.tk}/Zaak",
            params={"$filter": f"Nummer eq '{number}' and Verwijderd eq false", "$expand": "Besluit"},
        )
        expect_eq(len(case["value"]), 1, "cases with the number")
        decisions = sorted(case["value"][0]["Besluit"], key=lambda d: d["AgendapuntZaakBesluitVolgorde"])
        clauses = " or ".join(f"Besluit_Id eq {d['Id']}" for d in decisions)
        rows = await self.fakes.tk_all("Stemming", f"Verwijderd eq false and ({clauses})")
        expect(bool(decisions), f"the fake has decisions on {number}")
        got = structured(await client.call_tool("tk_votes", {"id": number}), "tk_votes")
        results = got.get("results", [])
        expect_eq([r["decision_id"] for r in results], [d["Id"] for d in decisions], "one result per decision")
        for result, decision in zip(results, decisions):
            mine = [r for r in rows if r["Besluit_Id"] == decision["Id"]]
            totals = {"voor": 0, "tegen": 0, "niet_deelgenomen": 0}
            for r in mine:
                n = 1 if r["Persoon_Id"] else r["FractieGrootte"]
                totals[{"Voor": "voor", "Tegen": "tegen"}.get(r["Soort"], "niet_deelgenomen")] += n
            expect_eq(result["totals"], totals, f"totals of {decision['Id']}")
            expect_eq(result["decision_text"], decision["BesluitTekst"], "BesluitTekst")
            # Every member's vote, grouped by faction and vote.
            members = sorted((name, g["faction"], g["vote"]) for g in result["members"] for name in g["names"])
            expect_eq(members, sorted((r["ActorNaam"], r["ActorFractie"], r["Soort"]) for r in mine if r["Persoon_Id"]),
                      "members' votes")
            flagged = sorted(f["faction"] for f in result["factions"] if f["mistake"])
            expect_eq(flagged, sorted({r["ActorFractie"] for r in mine if r["Vergissing"]}), "mistakes flagged")
        return results

    async def tk_debates(self, client: Client) -> None:
        days = "Datum ge 2025-07-02 and Datum le 2025-07-03"
        page = await self.fakes.get_json(
            f"{self.fakes.tk}/Vergadering",
            params={"$filter": f"Verwijderd eq false and Soort eq 'Commissie' and {days}", "$expand": "Verslag"},
        )
        with_report = {f"vergadering:{m['Id']}" for m in page["value"] if any(not v["Verwijderd"] for v in m["Verslag"])}
        expect(len(with_report) < len(page["value"]), "the fake has a meeting without a report in these days")
        got = structured(await client.call_tool(
            "tk_debates", {"kind": "committee", "date_from": "2025-07-02", "date_to": "2025-07-03", "limit": 10}),
            "tk_debates")
        expect_eq({r["id"] for r in got.get("results", [])}, with_report, "the meetings with a report")
        expect(all(r["tool"] == "tk_debate" and r["platform"] == "tk" for r in got["results"]), "read by tk_debate")

    async def tk_meeting_report(self, meeting: str) -> tuple[dict[str, Any], dict[str, Any], ET.Element]:
        """A meeting as the fake serves it: its record, its report's record and the report's VLOS file."""
        record = await self.fakes.get_json(f"{self.fakes.tk}/Vergadering({meeting})", params={"$expand": "Verslag"})
        reports = [v for v in record["Verslag"] if not v["Verwijderd"]]
        expect(len(reports) == 1, f"meeting {meeting} has one report in the fake")
        report = await self.fakes.get_xml(f"{self.fakes.tk}/Verslag({reports[0]['Id']})/resource")
        return record, reports[0], report

    async def tk_debates_by_speaker(self, client: Client) -> None:
        page = await self.fakes.get_json(
            f"{self.fakes.tk}/FractieZetelPersoon",
            params={"$filter": "Verwijderd eq false", "$expand": "Persoon,FractieZetel($expand=Fractie)"},
        )
        seats = list(page["value"])
        for _ in range(MAX_LIST_PAGES):
            if not page.get("@odata.nextLink"):
                break
            page = await self.fakes.tk_next(page["@odata.nextLink"])
            seats.extend(page["value"])
        dijks = {(p["Roepnaam"], p["Id"]) for p in (s["Persoon"] for s in seats)
                 if p["Achternaam"] == "Dijk" and p["Tussenvoegsel"] == "van"}
        expect(len(dijks) > 1, "the fake has several members named van Dijk")
        # An ambiguous name: the candidates, and no meeting asked for.
        result = await client.call_tool("tk_debates", {"speaker": "van Dijk"})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        for first, _ in dijks:
            expect(f"{first} van Dijk" in message, f"{first} van Dijk is a candidate: {message[:300]}")
        expect("no meeting was asked for" in message, message[:300])
        # One member: exactly the meetings whose reports hold a turn of theirs.
        meetings = await self.fakes.get_json(
            f"{self.fakes.tk}/Vergadering", params={"$filter": "Verwijderd eq false", "$expand": "Verslag"})
        with_report = [m["Id"] for m in meetings["value"] if any(not v["Verwijderd"] for v in m["Verslag"])]
        expect(0 < len(with_report) <= 10, "tk_debates reads every report the fake has (at most 10)")
        ns = "{http://www.tweedekamer.nl/ggm/vergaderverslag/v1.0}"
        by_first_name: dict[str, set[str]] = {}
        for meeting in with_report:
            _, _, report = await self.tk_meeting_report(meeting)
            for turn in [*report.iter(f"{ns}woordvoerder"), *report.iter(f"{ns}interrumpant")]:
                first_name = (turn.findtext(f"{ns}spreker/{ns}voornaam") or "").strip()
                surname = (turn.findtext(f"{ns}spreker/{ns}achternaam") or "").split()
                if "Dijk" in surname and "van" in surname:
                    by_first_name.setdefault(first_name, set()).add(f"vergadering:{meeting}")
        first = next((f for f, _ in sorted(dijks) if f in by_first_name), None)
        expect(first is not None, "a member named van Dijk spoke in a report of the fake")
        spoke = by_first_name[first]
        got = structured(await client.call_tool("tk_debates", {"speaker": f"{first} van Dijk", "limit": 10}),
                         "tk_debates")
        expect_eq({r["id"] for r in got.get("results", [])}, spoke, f"the meetings {first} van Dijk spoke in")

    async def tk_debate(self, client: Client) -> None:
        meeting, verslag, report = await self.tk_meeting_report(TK_MEETING)
        ns = "{http://www.tweedekamer.nl/ggm/vergaderverslag/v1.0}"

        def name(turn: ET.Element) -> str:
            return (turn.findtext(f"{ns}spreker/{ns}verslagnaam") or "").strip()

        def field(turn: ET.Element, what: str) -> str:
            return (turn.findtext(f"{ns}spreker/{ns}{what}") or "").strip()

        def chair(turn: ET.Element) -> bool:
            return (turn.findtext(f"{ns}isvoorzitter") or "").strip() == "true"

        pairs = [(name(w), name(i)) for w in report.iter(f"{ns}woordvoerder") for i in w.findall(f"{ns}interrumpant")
                 if not chair(i)]
        expect(bool(pairs), "the report has interruptions")
        speeches = [w for w in report.iter(f"{ns}woordvoerder") if not chair(w)]
        member = next((w for w in speeches if field(w, "fractie")), None)
        minister = next((w for w in speeches if not field(w, "fractie") and
                         (w.find(f"{ns}spreker").get("soort") or "").startswith("Minister")), None)
        expect(member is not None and minister is not None, "the report has a member's and a minister's speech")
        result = await client.call_tool("tk_debate", {"id": f"vergadering:{TK_MEETING}", "length": 100000})
        got = structured(result, "tk_debate")
        text = error_text(result)
        expect_eq(got.get("kind"), meeting["Soort"], "the meeting's kind")
        expect_eq(got.get("kind"), "Commissie", "a committee debate")
        expect_eq(got.get("report_id"), verslag["Id"], "the report read")
        # A member: name and faction; a minister: name and function, no faction.
        expected = f"[speech] {name(member)} ({field(member, 'fractie')}):"
        expect(expected in text, f"a member's speech as {expected!r}")
        expected = f"[speech] {name(minister)} ({field(minister, 'functie')}):"
        expect(expected in text, f"a minister's speech as {expected!r}")
        # Every interruption that is not the chair's: the interrupter first, then whom.
        lines = [line for line in text.splitlines() if line.startswith("[interruption] ")]
        expect_eq(len(lines), len(pairs), "every interruption, none of them the chair's")
        for line, (of, by) in zip(lines, pairs):
            expect(line.startswith(f"[interruption] {by} (") and f" → {of} (" in line,
                   f"{by} interrupting {of}: {line!r}")

    async def tk_debate_casco(self, client: Client) -> None:
        casco = await self.fakes.tk_all("Verslag", "Verwijderd eq false and Status eq 'Casco'")
        expect(bool(casco), "the fake serves a casco report")
        meeting = casco[0]["Vergadering_Id"]
        _, _, report = await self.tk_meeting_report(meeting)
        ns = "{http://www.tweedekamer.nl/ggm/vergaderverslag/v1.0}"
        expect(report.find(f".//{ns}woordvoerder") is None, "a casco report has no speeches")
        result = await client.call_tool("tk_debate", {"id": f"vergadering:{meeting}"})
        got = structured(result, "tk_debate")
        expect_eq(got.get("report_status"), "Casco", "the report's status")
        text = error_text(result)
        expect("This is a casco report" in text, f"the text says so: {text[:300]}")
        expect("[speech]" not in text, "no speech")

    async def tk_debate_motion(self, client: Client) -> None:
        # The plenary of 4 June 2025 (a real report of the corpus): the debate 2025A04597.
        meeting, activity = "f6102bb7-43b5-4d46-994a-2cebf2354dbf", "2025A04597"
        _, _, report = await self.tk_meeting_report(meeting)
        ns = "{http://www.tweedekamer.nl/ggm/vergaderverslag/v1.0}"
        # The debate and its continuation later in the meeting carry the same number.
        parts = [a for a in report.iter(f"{ns}activiteit") if (a.findtext(f"{ns}parlisid") or "") == activity]
        expect(len(parts) > 1, f"{activity} is continued later in the meeting")
        submitted = {f"{z.findtext(f'{ns}dossiernummer')}-{z.findtext(f'{ns}stuknummer')}"
                     for a in parts for f in a.iter(f"{ns}draadboekfragment") for z in f.iter(f"{ns}zaak")
                     if (z.get("soort") or "").startswith("Motie")}
        expect(bool(submitted), f"motions are submitted in {activity}")
        got = structured(await client.call_tool("tk_debate", {"id": f"vergadering:{meeting}", "activity": activity}),
                         "tk_debate")
        motions = got.get("motions", [])
        expect_eq({m["cited"] for m in motions}, submitted, "the motions submitted")
        voted = 0
        for motion in motions:
            case = motion.get("case_id")
            expect(bool(case), f"{motion['cited']} has its case number")
            zaak = await self.fakes.get_json(
                f"{self.fakes.tk}/Zaak",
                params={"$filter": f"Nummer eq '{case}' and Verwijderd eq false", "$expand": "Besluit"})
            expect_eq(len(zaak["value"]), 1, f"the fake's case {case}")
            expect_eq(zaak["value"][0]["Soort"], "Motie", f"{case} is a motion")
            if zaak["value"][0]["Besluit"]:
                await self.votes_match_the_fake(client, case)
                voted += 1
        expect(voted > 0, "a motion submitted in the debate was voted on")

    # Rechtspraak ----------------------------------------------------------------------

    async def rs_courts(self, client: Client) -> None:
        got = structured(await client.call_tool("rechtspraak_courts", {"filter": "Gerechtshof"}), "rechtspraak_courts")
        fake = [
            (c.findtext("Naam") or "").strip()
            for c in (await self.fakes.rs_list("Instanties")).iter("Instantie")
            if "Gerechtshof" in (c.findtext("Naam") or "") and c.find("EndDate") is None
        ]
        expect_eq(sorted(c["title"] for c in got.get("results", [])), sorted(fake), "court names")
        expect(all(c["id"] == c["id"].strip() for c in got["results"]), "identifiers are trimmed")

    async def rs_areas(self, client: Client) -> None:
        got = structured(await client.call_tool("rechtspraak_areas", {"limit": 200}), "rechtspraak_areas")
        fake = [(a.findtext("Naam") or "").strip() for a in (await self.fakes.rs_list("Rechtsgebieden")).iter("Rechtsgebied")]
        expect_eq(sorted(a["title"] for a in got.get("results", [])), sorted(fake), "area names")

    async def rs_procedures(self, client: Client) -> None:
        got = structured(await client.call_tool("rechtspraak_procedures", {"limit": 200}), "rechtspraak_procedures")
        fake = [(p.findtext("Naam") or "").strip() for p in (await self.fakes.rs_list("Proceduresoorten")).iter("Proceduresoort")]
        expect_eq([p["title"] for p in got.get("results", [])], fake, "procedure names")

    async def lists_procedures(self, client: Client) -> None:
        asked = {"platform": "rechtspraak", "list": "procedures", "limit": 200}
        result = await client.call_tool("lists", asked)
        got = structured(result, "lists")
        own = structured(await client.call_tool("rechtspraak_procedures", {"limit": 200}), "rechtspraak_procedures")
        expect_eq(got, own, "lists' structured content")
        texts = [c.text for c in result.content if getattr(c, "type", "") == "text"]
        expect(bool(texts) and "rechtspraak_procedures" in texts[-1], f"the last text names the tool: {texts}")
        refused = await client.call_tool("lists", {"platform": "rechtspraak", "list": "procedures", "state": "any"})
        expect(bool(refused.is_error), "an argument the list does not take is a tool error")
        message = refused.content[0].text if refused.content else ""
        expect("`state`" in message and "`filter`" in message, f"names the argument and those taken: {message}")

    async def rs_search_court(self, client: Client) -> None:
        args = {"court": "HR", "date_from": "2026-01-01", "date_to": "2026-12-31", "limit": 15}
        got = structured(await client.call_tool("rechtspraak_search", args), "rechtspraak_search")
        hr = await self.fakes.rs_court_id("HR")
        total, fake = await self.fakes.rs_feed([
            ("creator", hr), ("date", "2026-01-01"), ("date", "2026-12-31"), ("return", "DOC"),
            ("sort", "DESC"), ("from", "0"), ("max", "15"),
        ])
        expect_eq([r["id"] for r in got.get("results", [])], fake, "ECLIs")
        expect_eq(got.get("total"), total, "total")
        expect(all(r["organization"] == "Hoge Raad" for r in got["results"]), "a ruling of another court")
        expect(all(r["tool"] == "rechtspraak_ruling" for r in got["results"]), "read with rechtspraak_ruling")

    async def rs_search_paging(self, client: Client) -> None:
        args = {"date_from": RS_BUSY_DAY, "date_to": RS_BUSY_DAY, "with_text": False, "sort": "oldest",
                "limit": 10, "offset": 995}
        got = structured(await client.call_tool("rechtspraak_search", args), "rechtspraak_search")
        total, fake = await self.fakes.rs_feed([("date", RS_BUSY_DAY), ("sort", "ASC"), ("from", "995"), ("max", "10")])
        expect(total > 1000, f"the busy day has {total} rulings")
        expect_eq([r["id"] for r in got.get("results", [])], fake, "ECLIs across the boundary")
        expect_eq(got.get("next_offset"), 1005, "next_offset")

    async def rs_search_words(self, client: Client) -> None:
        result = await client.call_tool("rechtspraak_search", {"query": "huurrecht"})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("no keyword search" in message, f"message: {message[:300]!r}")

    async def rs_ruling(self, client: Client) -> None:
        result = await client.call_tool("rechtspraak_ruling", {"id": RS_FOOTNOTES_ECLI})
        got = structured(result, "rechtspraak_ruling")
        expect_eq(got.get("id"), RS_FOOTNOTES_ECLI, "id")
        expect_eq((got.get("court") or {}).get("name"), await self.fakes.rs_creator(RS_FOOTNOTES_ECLI), "court")
        text = page_text(result)
        for part in ("[^1]", "| Post | Bedrag |", "Footnotes", "[image: situatieschets.png]"):
            expect(part in text, f"{part!r} not in the text")
        expect(len(got.get("relations") or []) == 2, f"relations {short(got.get('relations'))}")

    async def rs_ruling_metadata_only(self, client: Client) -> None:
        got = structured(await client.call_tool("rechtspraak_ruling", {"id": RS_METADATA_ONLY_ECLI}), "rechtspraak_ruling")
        expect_eq(got.get("has_text"), False, "has_text")
        expect_eq((got.get("court") or {}).get("name"), await self.fakes.rs_creator(RS_METADATA_ONLY_ECLI), "court")

    async def rs_ruling_missing(self, client: Client) -> None:
        result = await client.call_tool("rechtspraak_ruling", {"id": "ECLI:NL:HR:2099:1"})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("Rechtspraak" in message and "mededeling" in message, f"message: {message[:300]!r}")

    async def tk_document_text(self, client: Client) -> None:
        # The fake serves files by generation order (sim/fakes FileKind): the 7th document
        # is a PDF letter, the 4th a scan; the first (deleted) is left out by the filter.
        page = await self.fakes.tk_page("Document", "Verwijderd eq false")
        pdf, scan = page["value"][5]["Id"], page["value"][2]["Id"]
        first = with_page(await client.call_tool("tk_document_text", {"id": pdf, "length": 400}), "tk_document_text")
        expect_eq(first.get("format"), "pdf", "format")
        expect("financiële gevolgen voor gemeenten" in (first.get("text") or ""), f"text is {short(first.get('text'))}")
        expect_eq(first.get("has_more"), True, "has_more")
        rest = with_page(
            await client.call_tool("tk_document_text", {"id": pdf, "offset": 400, "length": 100000}), "tk_document_text"
        )
        expect_eq(rest.get("has_more"), False, "has_more of the rest")
        expect_eq(len(first["text"]) + len(rest["text"]), first.get("total_length"), "the pages add up")
        result = await client.call_tool("tk_document_text", {"id": scan})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("no text layer" in message, f"message: {message[:300]!r}")

    async def tk_search_invalid(self, client: Client) -> None:
        result = await client.call_tool("tk_search", {"query": "stikstof", "kind": "bogus"})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("kind" in message.lower() or "bogus" in message.lower(), f"message names neither: {message[:300]!r}")


    # Officiële Bekendmakingen ------------------------------------------------------------

    async def ob_search(self, client: Client) -> None:
        got = structured(await client.call_tool("ob_search", {"query": "omgevingsvisie", "limit": 5}), "ob_search")
        fake = await self.fakes.ob_sru(ob_cql(["omgevingsvisie"]), 1, 5)
        expect(ob_count(fake) > 5, "the fake should have more than 5 hits for omgevingsvisie")
        expect_eq(got.get("total"), ob_count(fake), "total")
        expect_eq([h.get("id") for h in got.get("results", [])], ob_identifiers(fake), "identifiers in order")
        titles = [e.text for e in fake.iterfind(".//ow:owmskern/dcterms:title", SRU_NS)]
        expect_eq([h.get("title") for h in got["results"]], titles, "titles")
        expect(all(h.get("tool") == "ob_document" for h in got["results"]), "read with ob_document")
        expect_eq(got.get("next_offset"), 5, "next_offset")

    async def ob_search_next(self, client: Client) -> None:
        args = {"query": "omgevingsvisie", "limit": 5, "offset": 5}
        got = structured(await client.call_tool("ob_search", args), "ob_search")
        fake = await self.fakes.ob_sru(ob_cql(["omgevingsvisie"]), 6, 5)
        expect_eq([h.get("id") for h in got.get("results", [])], ob_identifiers(fake), "identifiers of the second page")

    async def ob_document(self, client: Client) -> None:
        fake = await self.fakes.ob_sru(ob_cql(["omgevingsvisie"]), 1, 20)
        record = next(
            (g for g in fake.iterfind(".//gzd:gzd", SRU_NS)
             if g.find(".//gzd:itemUrl[@manifestation='xml']", SRU_NS) is not None),
            None,
        )
        expect(record is not None, "no hit with an XML rendition")
        identifier = record.find(".//dcterms:identifier", SRU_NS).text  # type: ignore[union-attr]
        xml_url = record.find(".//gzd:itemUrl[@manifestation='xml']", SRU_NS).text  # type: ignore[union-attr]
        text = await self.fakes.ob_text(xml_url or "")
        result = await client.call_tool("ob_document", {"id": identifier, "length": 100000})
        got = structured(result, "ob_document")
        expect_eq(got.get("id"), identifier, "id")
        if text:
            expect_eq(page_text(result), text[:100000], "the XML rendition's text")
        else:
            expect(got.get("has_text") is False, "an empty template has no text")

    async def bwb_search(self, client: Client) -> None:
        got = structured(await client.call_tool("bwb_search", {"query": "consumentenvuurwerk", "date": "2025-08-01"}),
                         "bwb_search")
        fake = await self.fakes.bwb_sru(
            'overheidbwb.titel all "consumentenvuurwerk" and overheidbwb.geldigheidsdatum==2025-08-01')
        ids = [e.text for e in fake.iter() if e.tag == "{http://purl.org/dc/terms/}identifier"]
        expect(len(ids) > 1, f"the fake has {len(ids)} regulations for consumentenvuurwerk")
        expect_eq([h.get("id") for h in got.get("results", [])], ids, "ids in order")
        expect_eq(got.get("total"), int(fake.findtext(f"{SRU12}numberOfRecords") or "-1"), "total")

    async def bwb_read(self, client: Client) -> None:
        texts = []
        for date in ("2025-01-01", "2025-08-01"):
            result = await client.call_tool("bwb_read", {"id": BWB_LAW, "date": date, "article": "2"})
            structured(result, "bwb_read")
            content = "".join(getattr(c, "text", "") for c in result.content)
            page = content.split("\n\n", 1)[1] if "\n\n" in content else ""
            expect_eq(page, await self.fakes.bwb_article(BWB_LAW, date, "2"), f"article 2 on {date}")
            texts.append(page)
        expect(texts[0] != texts[1], "the two versions' article 2 differ")

    async def eurlex_search_read(self, client: Client) -> None:
        got = structured(await client.call_tool("eurlex_search", {"query": "interoperabiliteit", "kind": "regulation"}),
                         "eurlex_search")
        ids = [h.get("id") for h in got.get("results", [])]
        expect("32024R0903" in ids, f"the Interoperable Europe Act among {ids}")
        for celex in ids:
            read = structured(await client.call_tool("eurlex_read", {"id": celex, "article": "1"}), "eurlex_read")
            expect(read.get("id", celex) == celex, f"eurlex_read {celex} answers {read.get('id')}")

    async def cvdr_search(self, client: Client) -> None:
        got = structured(await client.call_tool(
            "cvdr_search", {"query": "parkeren", "organization": "Gemeente Utrecht", "date": "2025-06-01"}), "cvdr_search")
        fake = await self.fakes.cvdr_sru('keyword all "parkeren" and dcterms.creator="Utrecht" and '
                                         'organisatieType="Gemeente" and overheidrg.datumGeldendOp=2025-06-01')
        ids = [e.text for e in fake.iter() if e.tag == "{http://purl.org/dc/terms/}identifier"]
        expect_eq(ids, ["CVDR700001_2"], "the fake's regulations of the municipality")
        expect_eq([h.get("id") for h in got.get("results", [])], ids, "ids in order")
        expect_eq(got.get("total"), int(fake.findtext(f"{SRU12}numberOfRecords") or "-1"), "total")
        first = (got.get("results") or [{}])[0]
        expect_eq((first.get("organization"), first.get("platform"), first.get("tool")),
                  ("Gemeente Utrecht", "cvdr", "cvdr_read"), "the result's vocabulary")

    async def cvdr_search_ambiguous(self, client: Client) -> None:
        before = await self.fakes.requests("cvdr")
        result = await client.call_tool("cvdr_search", {"query": "parkeren", "organization": "Utrecht"})
        expect_eq(await self.fakes.requests("cvdr"), before, "requests at the fake CVDR")
        message = error_text(result)
        expect(result.is_error is True and "`gemeente-utrecht`" in message and "`provincie-utrecht`" in message,
               f"the candidates: {message[:300]!r}")

    async def cvdr_read(self, client: Client) -> None:
        texts = []
        for date in ("2024-06-01", "2025-06-01"):
            result = await client.call_tool("cvdr_read", {"id": CVDR_REGULATION, "date": date})
            got = structured(result, "cvdr_read")
            content = "".join(getattr(c, "text", "") for c in result.content)
            page = content.split("\n\n", 1)[1] if "\n\n" in content else ""
            ident, text = await self.fakes.cvdr_text(CVDR_REGULATION, date)
            expect_eq(got.get("id"), ident, f"the version in force on {date}")
            expect_eq(page, text, f"the text on {date}")
            texts.append(page)
        expect(texts[0] != texts[1], "the two versions' texts differ")

    async def ob_search_invalid(self, client: Client) -> None:
        result = await client.call_tool("ob_search", {"query": "omgevingsvisie", "limit": 500})
        message = error_text(result)
        expect(result.is_error is True, f"isError is {result.is_error!r}: {message[:200]}")
        expect("limit" in message.lower(), f"message does not name `limit`: {message[:300]!r}")
        expect(len(message) < 2_000, f"message is {len(message)} characters long")


# ---------------------------------------------------------------------------------------
# Harness self-checks (no server).


async def harness_checks(report: Report, fakes: Fakes) -> tuple[str, str, str] | None:
    """Checks that the expected answers can be read from the fakes; returns the chosen documents."""
    docs: list[tuple[str, str, str]] = []

    async def sources() -> None:
        s = await fakes.obv_sources()
        expect(len(s) > 0 and all({"key", "label", "organizationType", "implemented"} <= set(x) for x in s), "sources")

    async def documents() -> None:
        long_doc, short_doc, key = await find_documents(fakes)
        long_text = (await fakes.obv_entity(long_doc))["markdownText"]
        short_text = (await fakes.obv_entity(short_doc))["markdownText"]
        expect(len(long_text) > 100_000, f"long document {long_doc}: {len(long_text)} characters")
        expect(len(short_text) < 20_000, f"short document {short_doc}: {len(short_text)} characters")
        docs.append((long_doc, short_doc, key))

    async def status() -> None:
        s = await fakes.obv_status()
        expect(bool(s["generatedAt"]) and len(s["sources"]) > 0, "status")

    async def tk_lists() -> None:
        factions = await fakes.tk_all("Fractie", "Verwijderd eq false")
        committees = await fakes.tk_all("Commissie", "Verwijderd eq false")
        expect(len(factions) > 0 and len(committees) > 250, f"{len(factions)} factions, {len(committees)} committees")
        expect(len(set(ids_of(committees))) == len(committees), "committee ids repeat across pages")

    async def tk_searches() -> None:
        page = await fakes.tk_page("Document", tk_words_filter(["stikstof"]) + " and Verwijderd eq false", "Datum desc")
        expect(len(page["value"]) == 250 and "@odata.nextLink" in page, "stikstof spans pages")
        guid = page["value"][0]["Id"]
        expect_eq((await fakes.tk_record("Document", guid))["Id"], guid, "Document(id)")
        quoted = await fakes.tk_page("Document", tk_words_filter(["'s-Hertogenbosch"]))
        expect(len(quoted["value"]) > 0, "a quote in a word is escaped")

    await report.run("[harness] fake /api/sources readable", sources)
    await report.run("[harness] fake has a long and a short document", documents)
    await report.run("[harness] fake /api/status readable", status)
    await report.run("[harness] fake Fractie and Commissie (all pages)", tk_lists)
    async def ob_searches() -> None:
        root = await fakes.ob_sru(ob_cql(["omgevingsvisie"]))
        expect(ob_count(root) > 0 and len(ob_identifiers(root)) > 0, "omgevingsvisie has hits")
        bare = await fakes.ob_sru("stikstof natuur")
        expect(bare.find("sru:numberOfRecords", SRU_NS) is None, "several bare words are rejected without a count")
        expect(bare.find(".//{http://docs.oasis-open.org/ns/search-ws/diagnostic}diagnostic") is not None, "a diagnostic")

    await report.run("[harness] fake Document search, paging and record", tk_searches)

    async def rs_trap() -> None:
        everything, _ = await fakes.rs_feed([("max", "1")])
        ignored, _ = await fakes.rs_feed([("q", "huurrecht"), ("max", "1")])
        expect(ignored == everything > 2000, f"q is ignored: {ignored} vs {everything}")

    await report.run("[harness] fake Rechtspraak ignores unknown parameters like the real one", rs_trap)
    await report.run("[harness] fake SRU search and its strict CQL", ob_searches)
    return docs[0] if docs else None


# ---------------------------------------------------------------------------------------


async def main(fakes_only: bool) -> int:
    report = Report()
    sim_bin = os.environ.get("BESLUITBRON_SIM_BIN", "")
    server_bin = os.environ.get("BESLUITBRON_BIN", "")
    if not sim_bin or (not fakes_only and not server_bin):
        print("set BESLUITBRON_SIM_BIN and BESLUITBRON_BIN (scripts/e2e does)", file=sys.stderr)
        return 2
    # Loopback only: a proxy from the environment must never see these requests.
    os.environ["NO_PROXY"] = ",".join(filter(None, [os.environ.get("NO_PROXY"), "127.0.0.1", "localhost"]))
    fakes_proc = server_proc = retired_fakes_proc = retired_server_proc = None
    with tempfile.TemporaryDirectory(prefix="besluitbron-e2e-") as tmp:
        tmp_path = Path(tmp)
        fakes_log, server_log = tmp_path / "fakes.log", tmp_path / "server.log"
        try:
            with anyio.fail_after(RUN_TIMEOUT_S):
                fakes_proc, urls = await start_fakes(sim_bin, fakes_log)
                report.ok("fakes started: " + ", ".join(f"{p} {urls[p]}" for p in PLATFORMS))
                async with httpx2.AsyncClient(headers=HARNESS_HEADERS, timeout=HTTP_TIMEOUT_S, trust_env=False) as http:
                    fakes = Fakes(urls["obv"], urls["tk"], http, urls["opentk"], urls["ori"], urls["rechtspraak"], urls["ob"],
                                  urls["bwb"], urls["cvdr"])
                    docs = await harness_checks(report, fakes)
                    if not fakes_only and docs is None:
                        report.fail("server checks", "skipped: the harness could not read the fakes")
                    elif not fakes_only:
                        data_dir = tmp_path / "data"
                        data_dir.mkdir()
                        server_proc, base = await start_server(server_bin, urls, data_dir, server_log)
                        if await report.run("server answers /healthz", lambda: wait_healthy(server_proc, base, http),
                                            SERVER_START_TIMEOUT_S + 5):
                            for mode in MODES:
                                await McpChecks(report, fakes, base, mode, docs).run()
                            if server_proc.returncode is None:
                                report.ok("server still running after the checks")
                            else:
                                report.fail("server still running after the checks", f"exit code {server_proc.returncode}")
                        # ORI retired: its own fakes (retired mode) behind a second server.
                        retired_fakes_proc, retired_urls = await start_fakes(
                            sim_bin, tmp_path / "fakes-retired.log", "ori:retired=html"
                        )
                        mixed = dict(urls, ori=retired_urls["ori"])
                        retired_dir = tmp_path / "data-retired"
                        retired_dir.mkdir()
                        retired_server_proc, retired_base = await start_server(
                            server_bin, mixed, retired_dir, tmp_path / "server-retired.log"
                        )
                        if await report.run("server with a retired ORI answers /healthz",
                                            lambda: wait_healthy(retired_server_proc, retired_base, http),
                                            SERVER_START_TIMEOUT_S + 5):
                            ready = await http.get(f"{retired_base}/readyz")
                            if ready.status_code == 200:
                                report.ok("a retired ORI leaves /readyz at 200")
                            else:
                                report.fail("a retired ORI leaves /readyz at 200", f"HTTP {ready.status_code}")
                            for mode in MODES:
                                await McpChecks(report, fakes, retired_base, mode, docs).run_retired()
        except TimeoutError:
            report.fail("run", f"not finished within {RUN_TIMEOUT_S:.0f} s")
        except Exception as e:
            report.fail("run", describe(e))
        finally:
            await stop(retired_server_proc)
            await stop(server_proc)
            await stop(retired_fakes_proc)
            await stop(fakes_proc)
        if report.failed:
            for name, log in (("server", server_log), ("fakes", fakes_log)):
                if log.exists():
                    print(f"--- last lines of the {name} log ---\n{tail(log)}", flush=True)
    if PROGRESS_SEEN:
        print("progress notifications seen by the SDK's callback in search: "
              + ", ".join(f"{era} {n}" for era, n in PROGRESS_SEEN.items()), flush=True)
    print(f"{report.passed} passed, {report.failed} failed", flush=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fakes-only", action="store_true", help="check the harness against the fakes; no server")
    sys.exit(asyncio.run(main(parser.parse_args().fakes_only)))
