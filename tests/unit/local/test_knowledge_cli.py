"""`agent-memory knowledge import | list | delete`, run in-process (`cli.main`) against an in-memory
stand-in for the knowledge routes, spoken to through the real client (only its transport is fake)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.client import RawResponse
from agent_memory.local import cli, knowledge_command

URL = "http://knowledge.test:9000"
ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
FAILOVER = "# Failover\n\n## DNS\n\nFail DNS over to eu-west-2.\n\n## Database\n\nPromote the replica.\n"


@dataclass
class DocumentsService:
    """The knowledge routes over dicts, as the service answers them: a put of a stored version is
    ``unchanged`` with the same content and a 409 with other content; an accepted put is stored
    at once, or once ``store_after`` reads of it found nothing; ``refuse`` answers every request
    with that status."""

    store_after: int = 0
    refuse: int | None = None
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)
    queued: dict[str, tuple[dict[str, Any], int]] = field(default_factory=dict)
    requests: list[tuple[str, str, dict[str, str], Any]] = field(default_factory=list)

    def send(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None, timeout_s: float
    ) -> RawResponse:
        payload = json.loads(body) if body else None
        self.requests.append((method, url, dict(headers), payload))
        if self.refuse is not None:
            return self._answer(self.refuse, {"error": {"code": "forbidden", "message": "no", "details": []}})
        path = urlsplit(url).path.removeprefix("/v1/knowledge/documents").strip("/")
        if method == "PUT":
            return self._put(path, payload)
        if method == "DELETE":
            removed = self.stored.pop(path, {}).get("passages", 0)
            self.queued.pop(path, None)
            return self._answer(200, {"doc_id": path, "passages_removed": removed})
        if not path:
            documents = [self._out(d) for _, d in sorted(self.stored.items())]
            return self._answer(
                200, {"documents": documents, "next_cursor": None, "pending": len(self.queued)}
            )
        return self._get(path)

    def _put(self, doc_id: str, body: dict[str, Any]) -> RawResponse:
        passages = body["text"].count("\n\n") or 1
        stored = self.stored.get(doc_id)
        if stored is not None and stored["version"] == body["version"]:
            if {k: stored[k] for k in body} != body:
                message = f"version {body['version']!r} of document {doc_id!r} is stored with other content"
                return self._answer(409, {"error": {"code": "conflict", "message": message, "details": []}})
            return self._answer(200, {"doc_id": doc_id, "version": body["version"], "status": "unchanged",
                                      "passages": stored["passages"]})  # fmt: skip
        document = {**body, "doc_id": doc_id, "passages": passages}
        if self.store_after:
            self.queued[doc_id] = (document, self.store_after)
        else:
            self.stored[doc_id] = document
        return self._answer(
            202, {"doc_id": doc_id, "version": body["version"], "status": "accepted", "passages": passages}
        )

    def _get(self, doc_id: str) -> RawResponse:
        if doc_id in self.queued:
            document, reads_left = self.queued[doc_id]
            if reads_left <= 0:
                self.stored[doc_id] = document
                del self.queued[doc_id]
            else:
                self.queued[doc_id] = (document, reads_left - 1)
        if doc_id not in self.stored:
            return self._answer(404, {"error": {"code": "not_found", "message": "no", "details": []}})
        return self._answer(200, self._out(self.stored[doc_id]))

    @staticmethod
    def _out(document: dict[str, Any]) -> dict[str, Any]:
        return {
            "source_uri": None, "tags": [], "valid_from": None, "valid_until": None, **document,
            "created_at": "2026-11-20T00:00:00Z", "updated_at": "2026-11-20T00:00:00Z", "hits": 0,
            "last_hit_at": None, "text": None,
        }  # fmt: skip

    @staticmethod
    def _answer(status: int, body: Any) -> RawResponse:
        return RawResponse(status, {}, json.dumps(body).encode())

    def close(self) -> None:
        pass

    def puts(self) -> dict[str, dict[str, Any]]:
        return {
            urlsplit(url).path.rsplit("/", 1)[1]: body
            for method, url, _, body in self.requests
            if method == "PUT"
        }


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> DocumentsService:
    """The stand-in, reached by every client the commands make; no endpoint or key from the
    environment of whoever runs the tests."""
    fake = DocumentsService()
    real = knowledge_command.knowledge_client
    monkeypatch.setattr(
        knowledge_command,
        "knowledge_client",
        lambda args: real(args, transport=fake, sleep=lambda _: None),
    )
    for name in ("AGENT_MEMORY_URL", "AGENT_MEMORY_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return fake


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    """A folder of documents as a team keeps them: nested, one plain-text note, a file of another
    kind, an empty placeholder and a hidden folder."""
    root = tmp_path / "docs"
    (root / "runbooks").mkdir(parents=True)
    (root / "adr").mkdir()
    (root / ".git").mkdir()
    (root / "runbooks" / "failover.md").write_text(FAILOVER)
    (root / "adr" / "ADR 12 — regions.markdown").write_text("# ADR-12: Regions\n\nWe run in two regions.\n")
    (root / "office.txt").write_text("# not a heading in plain text\n\nThe office opens at 9.\n")
    (root / "README.rst").write_text("Not imported.\n")
    (root / "placeholder.md").write_text("  \n")
    (root / ".git" / "HEAD.md").write_text("# hidden\n")
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str], str]:
    """``agent-memory ARGV...`` with the stand-in's URL and a key: exit code, stdout lines, stderr."""
    capsys.readouterr()
    code = cli.main([*argv, "--url", URL, "--api-key", "amk_publisher"])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


# --- naming ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("runbooks/failover.md", "runbooks.failover"),
        ("adr/ADR 12 — regions.markdown", "adr.ADR-12-regions"),
        ("café/Menü du jour.txt", "cafe.Menu-du-jour"),
        ("_drafts/-idea-.md", "drafts.idea"),
        ("v1.2/notes.md", "v1.2.notes"),
        ("a b/c.md", "a-b.c"),
    ],
)
def test_a_document_id_is_the_files_path_slugified(path: str, expected: str) -> None:
    # WHEN / THEN
    assert knowledge_command.document_id(PurePosixPath(path)) == expected


def test_a_path_without_a_letter_or_longer_than_an_id_still_makes_a_distinct_valid_id() -> None:
    # GIVEN
    long_a = PurePosixPath("/".join(["section"] * 30) + "/a.md")
    long_b = PurePosixPath("/".join(["section"] * 30) + "/b.md")

    # WHEN
    ids = [knowledge_command.document_id(p) for p in (PurePosixPath("日本.md"), long_a, long_b)]

    # THEN
    assert ids[0].startswith("doc-")
    assert all(ID_PATTERN.match(i) for i in ids), ids
    assert len(ids[1]) == 128
    assert ids[1] != ids[2]


@given(
    st.lists(st.text(min_size=1).filter(lambda t: "/" not in t and "\x00" not in t), min_size=1, max_size=6)
)
def test_every_path_makes_an_id_the_service_accepts(parts: list[str]) -> None:
    """Whatever a file is called, its id matches the document id pattern."""
    assert ID_PATTERN.match(knowledge_command.document_id(PurePosixPath(*parts, "x.md")))


@pytest.mark.parametrize(
    ("text", "fmt", "expected"),
    [
        ("Intro\n\n#  The   Title ##\n\n# Second\n", "markdown", "The Title"),
        ("```\n# not a title\n```\n\n# Title\n", "markdown", "Title"),
        ("## Only a section\n\n#hashtag\n", "markdown", "file-name"),
        ("# Looks like a title\n", "text", "file-name"),
    ],
)
def test_the_title_is_the_first_h1_outside_code_else_the_file_name(
    text: str, fmt: Any, expected: str
) -> None:
    # WHEN / THEN
    assert knowledge_command.document_title(text, fmt, "file-name") == expected


# --- import --------------------------------------------------------------------------------------------


def test_import_puts_every_document_with_a_line_each_and_a_summary(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN the folder is imported with a tag
    code, out, err = run(capsys, "knowledge", "import", str(docs), "--tag", "ops", "--tag", "ops")

    # THEN one line per file in path order, then the summary
    assert code == 0, err
    assert out == [
        "[1/4] adr.ADR-12-regions: accepted (1 passage)",
        "[2/4] office: accepted (1 passage)",
        "[3/4] placeholder: skipped (no text)",
        "[4/4] runbooks.failover: accepted (4 passages)",
        "4 file(s): 3 accepted, 0 unchanged, 1 skipped, 0 failed",
    ]
    # AND each went to the documents route of --url with --api-key, titled, tagged and located
    puts = service.puts()
    assert puts["runbooks.failover"] == {
        "version": puts["runbooks.failover"]["version"], "title": "Failover", "text": FAILOVER,
        "format": "markdown", "source_uri": "runbooks/failover.md", "tags": ["ops"],
    }  # fmt: skip
    assert re.fullmatch(r"[0-9a-f]{12}", puts["runbooks.failover"]["version"])
    assert (puts["adr.ADR-12-regions"]["title"], puts["adr.ADR-12-regions"]["source_uri"]) == (
        "ADR-12: Regions",
        "adr/ADR 12 — regions.markdown",
    )
    assert (puts["office"]["title"], puts["office"]["format"]) == ("office", "text")
    method, url, headers, _ = service.requests[0]
    assert (method, url) == ("PUT", f"{URL}/v1/knowledge/documents/adr.ADR-12-regions")
    assert headers["Authorization"] == "Bearer amk_publisher"


def test_an_unchanged_folder_imported_again_is_unchanged_and_a_change_is_a_new_version(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the folder imported once
    run(capsys, "knowledge", "import", str(docs))
    first = service.puts()["runbooks.failover"]["version"]

    # WHEN it is imported again as it is, then with one file changed, then with a tag for all
    again = run(capsys, "knowledge", "import", str(docs))
    (docs / "runbooks" / "failover.md").write_text(FAILOVER + "\nCall the on-call.\n")
    changed = run(capsys, "knowledge", "import", str(docs))
    tagged = run(capsys, "knowledge", "import", str(docs), "--tag", "ops")

    # THEN nothing new the second time, only the changed file the third, every file the fourth
    assert again[0] == 0 and again[1][-1] == "4 file(s): 0 accepted, 3 unchanged, 1 skipped, 0 failed"
    assert changed[0] == 0 and "[4/4] runbooks.failover: accepted (5 passages)" in changed[1]
    assert changed[1][-1] == "4 file(s): 1 accepted, 2 unchanged, 1 skipped, 0 failed"
    assert service.stored["runbooks.failover"]["version"] != first
    assert tagged[0] == 0 and tagged[1][-1] == "4 file(s): 3 accepted, 0 unchanged, 1 skipped, 0 failed"


def test_a_version_given_for_changed_text_fails_that_file_and_the_exit_code_says_so(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the folder imported as version v1
    assert run(capsys, "knowledge", "import", str(docs), "--version", "v1")[0] == 0
    (docs / "office.txt").write_text("The office opens at 8.\n")

    # WHEN it is imported as v1 again, one file changed
    code, out, err = run(capsys, "knowledge", "import", str(docs), "--version", "v1")

    # THEN the changed file failed with the service's reason and what to do, the others went on
    assert code == 1
    assert out[1].startswith("[2/4] office: failed: version 'v1' of document 'office' is stored with other")
    assert out[-1] == "4 file(s): 0 accepted, 2 unchanged, 1 skipped, 1 failed"
    assert "failed: office.txt (office):" in err
    assert "give the new text a new --version" in err


def test_files_that_cannot_be_put_fail_alone(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a file that is not UTF-8 and two whose paths make one id
    (docs / "latin1.md").write_bytes("caf\xe9".encode("latin-1"))
    (docs / "on call.md").write_text("# On call\n\nPage once.\n")
    (docs / "on-call.md").write_text("# On-call\n\nPage twice.\n")

    # WHEN
    code, out, err = run(capsys, "knowledge", "import", str(docs))

    # THEN each of them failed, named on stderr, and the rest was put
    assert code == 1
    assert [line.split(": ")[0] for line in out if ": failed" in line] == [
        "[2/7] latin1",
        "[4/7] on-call",
        "[5/7] on-call",
    ]
    assert "failed: on call.md (on-call): takes the id of on-call.md too" in err
    assert "failed: latin1.md (latin1): cannot be read as UTF-8 text" in err
    assert set(service.puts()) == {"adr.ADR-12-regions", "office", "runbooks.failover"}


def test_a_key_without_the_knowledge_scope_stops_the_import_at_the_first_file(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    service.refuse = 403

    # WHEN
    code, out, err = run(capsys, "knowledge", "import", str(docs))

    # THEN
    assert code == 1
    assert out == ["[1/4] adr.ADR-12-regions: failed"]
    assert "3 file(s) not tried" in err
    assert len(service.requests) == 1


def test_wait_polls_until_every_accepted_document_is_stored(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a service that stores a document only once two reads of it found nothing
    service.store_after = 2

    # WHEN
    code, out, err = run(capsys, "knowledge", "import", str(docs), "--wait")

    # THEN it read each accepted one until stored, then said so
    assert code == 0, err
    assert out[-1] == "stored: 3 document(s) searchable"
    assert set(service.stored) == {"adr.ADR-12-regions", "office", "runbooks.failover"}
    assert sum(1 for method, *_ in service.requests if method == "GET") == 9


def test_wait_gives_up_at_its_deadline(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a service that stores nothing in time
    service.store_after = 1_000

    # WHEN
    code, _, err = run(capsys, "knowledge", "import", str(docs), "--wait", "--wait-timeout", "0")

    # THEN
    assert code == 1
    assert "3 document(s) not stored after 0.0 s" in err


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (["knowledge", "import", "missing-folder"], 2, "is not a directory"),
        (["knowledge", "import", "{docs}", "--version", "not a version"], 2, "is not a version"),
        (["knowledge", "import", "{empty}"], 1, "no *.md, *.markdown, *.txt file under"),
    ],
)
def test_wrong_invocations_say_why(
    service: DocumentsService,
    docs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    code: int,
    message: str,
) -> None:
    # GIVEN
    (tmp_path / "empty").mkdir()
    filled = [a.format(docs=docs, empty=tmp_path / "empty") for a in argv]

    # WHEN
    exit_code, _, err = run(capsys, *filled)

    # THEN
    assert exit_code == code
    assert message in err
    assert service.requests == []


def test_without_a_key_nothing_is_sent(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN
    code = cli.main(["knowledge", "import", str(docs), "--url", URL])

    # THEN
    assert code == 2
    assert "AGENT_MEMORY_API_KEY" in capsys.readouterr().err
    assert service.requests == []


def test_the_environment_names_the_endpoint_and_key_and_no_local_runtime_is_set_up(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the endpoint and key in the environment, as `agent-memory mcp` reads them
    monkeypatch.setenv("AGENT_MEMORY_URL", "http://from-env.test:1")
    monkeypatch.setenv("AGENT_MEMORY_API_KEY", "amk_env")
    monkeypatch.delenv("POWERTOOLS_SERVICE_NAME", raising=False)

    # WHEN
    code = cli.main(["knowledge", "import", str(docs)])

    # THEN they were used, and the command set none of the local runtime's settings
    assert code == 0, capsys.readouterr().err
    _, url, headers, _ = service.requests[0]
    assert url.startswith("http://from-env.test:1/v1/knowledge/documents/")
    assert headers["Authorization"] == "Bearer amk_env"
    assert "POWERTOOLS_SERVICE_NAME" not in os.environ


# --- list and delete -------------------------------------------------------------------------------------


def test_list_prints_a_json_line_per_document_and_delete_removes_one(
    service: DocumentsService, docs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the folder imported and stored
    run(capsys, "knowledge", "import", str(docs), "--wait")

    # WHEN the documents are listed, one is deleted, then deleted again
    listed = run(capsys, "knowledge", "list")
    deleted = run(capsys, "knowledge", "delete", "runbooks.failover")
    again = run(capsys, "knowledge", "delete", "runbooks.failover")

    # THEN
    code, lines, err = listed
    assert code == 0
    assert [json.loads(line)["doc_id"] for line in lines] == [
        "adr.ADR-12-regions",
        "office",
        "runbooks.failover",
    ]
    assert "text" not in json.loads(lines[0])
    assert err.strip() == "3 document(s); 0 put(s) still queued"
    assert deleted[:2] == (0, ["deleted runbooks.failover: 4 passage(s) gone from search"])
    assert again[1] == ["deleted runbooks.failover: nothing was stored (a put of it still queued is dropped)"]
    assert ("DELETE", f"{URL}/v1/knowledge/documents/runbooks.failover") in [
        (method, url) for method, url, *_ in service.requests
    ]


def test_a_refused_list_or_delete_is_a_line_on_stderr_and_exit_1(
    service: DocumentsService, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a service that refuses the key
    service.refuse = 403

    # WHEN
    listed = run(capsys, "knowledge", "list")
    deleted = run(capsys, "knowledge", "delete", "runbooks.failover")

    # THEN
    assert (listed[0], listed[1]) == (1, [])
    assert listed[2].strip() == "error: 403 forbidden: no"
    assert (deleted[0], deleted[2].strip()) == (1, "error: 403 forbidden: no")
