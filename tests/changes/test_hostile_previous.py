"""A previous site is hostile input: its feed (huge, deep, a billion-laughs bomb, 10,000
entries, foreign entries) and its board are read under bounds, and never fail the build."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from generator.changes import (
    ChangeKind,
    FeedEntry,
    FeedError,
    FeedLimits,
    load_previous,
    merge_history,
    parse_feed,
    render_feed,
    snapshot_from_doc,
)
from generator.changes.atom import ID_PREFIX
from tests.changes.conftest import DAY, EPOCH, RECIPE, Sites, build

ATOM = "http://www.w3.org/2005/Atom"


def _entry(n: int, *, recipe: str = "r1", ident: str | None = None) -> str:
    ident = ident or f"{ID_PREFIX}change/{n:064x}"
    return (
        f"<entry><id>{ident}</id><title>t{n}</title><updated>2027-01-1{n % 10}T00:00:00Z"
        f"</updated><link rel='alternate' href='javascript:alert(1)'/>"
        f"<category scheme='https://evidence-dashboard.dev/recipe' term='{recipe}'/>"
        f"<category scheme='https://evidence-dashboard.dev/change-kind' term='rollup'/>"
        f"<summary>s{n}</summary></entry>"
    )


def _feed(body: str) -> bytes:
    return f'<?xml version="1.0"?><feed xmlns="{ATOM}"><id>x</id>{body}</feed>'.encode()


BILLION_LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE lolz [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol3 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
 <!ENTITY lol4 "&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;&lol3;">
 <!ENTITY lol9 "&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;&lol4;">
]>
<feed xmlns="http://www.w3.org/2005/Atom"><title>&lol9;</title></feed>"""
EXTERNAL = (
    b'<?xml version="1.0"?><!DOCTYPE feed [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
    b'<feed xmlns="http://www.w3.org/2005/Atom"><title>&x;</title></feed>'
)


def test_our_own_feed_reads_back() -> None:
    entries = [
        FeedEntry(
            f"{ID_PREFIX}change/{n:064x}",
            f"t<{n}>&",
            "2027-01-15T00:00:00Z",
            "r1",
            ChangeKind.CHECK,
            "s & <b>",
        )
        for n in range(3)
    ]
    data = render_feed(
        entries,
        feed_id="f",
        title="t",
        updated="2027-01-15T00:00:00Z",
        self_href="feed.xml",
        site_href="changes/",
        site_url=None,
    )
    assert parse_feed(data) == entries


@pytest.mark.parametrize(
    ("data", "reason"),
    [
        (BILLION_LAUGHS, "document type"),
        (EXTERNAL, "document type"),
        (_feed("<a>" * 50 + "</a>" * 50), "deeper"),
        (b" " * (9 * 1024 * 1024), "larger"),
        (_feed("<x/>" * 60_000), "elements"),
        (b"<rss><channel/></rss>", "not an Atom feed"),
        (b"<feed", "well-formed"),
    ],
    ids=["billion-laughs", "external-entity", "deep", "huge", "many-elements", "rss", "broken"],
)
def test_a_hostile_feed_is_refused_with_a_reason(data: bytes, reason: str) -> None:
    with pytest.raises(FeedError, match=reason):
        parse_feed(data)


def test_ten_thousand_entries_stop_at_the_limit() -> None:
    data = _feed("".join(_entry(n) for n in range(10_000)))
    entries = parse_feed(data)
    assert len(entries) == FeedLimits().max_entries == 200
    assert entries[0].id.endswith(f"{0:064x}")


def test_foreign_entries_are_not_carried_and_links_are_never_taken() -> None:
    body = (
        _entry(1)
        + _entry(2, recipe="../../etc")
        + _entry(3, ident="https://evil.example/")
        + _entry(4).replace("2027-01-14T00:00:00Z", "yesterday")
        + _entry(5).replace("term='rollup'", "term='pwned'")
        + _entry(6).replace("<title>t6</title>", "<title>" + "x" * 5000 + "</title>")
    )
    entries = parse_feed(_feed(body))
    assert [e.title for e in entries] == ["t1"]
    rendered = render_feed(
        entries,
        feed_id="f",
        title="t",
        updated="2027-01-15T00:00:00Z",
        self_href="feed.xml",
        site_href="changes/",
        site_url=None,
    )
    assert b"javascript" not in rendered and b'href="recipes/r1/"' in rendered


def test_history_merges_newest_first_without_duplicates_and_is_capped() -> None:
    def e(n: int, day: int) -> FeedEntry:
        return FeedEntry(
            f"{ID_PREFIX}change/{n:064x}",
            f"t{n}",
            f"2027-01-{day:02d}T00:00:00Z",
            "r",
            ChangeKind.ROLLUP,
            "",
        )

    new = [e(1, 20), e(2, 20)]
    old = [e(2, 20), e(3, 19)] + [e(n, 10) for n in range(10, 400)]
    merged = merge_history(new, old)
    assert [m.id for m in merged[:3]] == [e(1, 0).id, e(2, 0).id, e(3, 0).id]
    assert len(merged) == 200 and len({m.id for m in merged}) == 200


def test_a_hostile_board_keeps_only_well_formed_recipes() -> None:
    doc = {
        "buildTime": "2027-01-15T00:00:00Z",
        "commit": ["not", "a", "string"],
        "recipes": {
            "ok": {"rollup": "SINGLE", "checks": {"a/b": "SINGLE", "x": 1}, "evidence": []},
            "../bad": {"rollup": "SINGLE"},
            "no-rollup": {"checks": {}},
            "big": {"rollup": "x" * 10_000},
        },
    }
    board = snapshot_from_doc(doc)
    assert board is not None and board.commit is None
    assert list(board.recipes) == ["ok"] and dict(board.recipes["ok"].checks) == {"a/b": "SINGLE"}
    assert snapshot_from_doc(["not", "a", "board"]) is None


def test_an_unreachable_previous_url_is_a_warning() -> None:
    found = load_previous("https://127.0.0.1:9/", allow_private=["127.0.0.1:9"])
    assert found.board is None and found.entries == ()
    assert found.warnings and "could not be read" in found.warnings[0]


def test_a_hostile_previous_feed_never_fails_the_build(sites: Sites, tmp_path: Path) -> None:
    previous = Path(shutil.copytree(sites.after, tmp_path / "previous", symlinks=True))
    (previous / "feed.xml").write_bytes(BILLION_LAUGHS)
    done = build(
        tmp_path / "site",
        cache=sites.cache,
        epoch=EPOCH + 2 * DAY,
        extra=["--previous", str(previous)],
    )
    assert "feed.xml could not be read" in done.stderr
    doc = json.loads((tmp_path / "site" / "data" / "changes.json").read_bytes())
    assert doc["previous"]["read"] is True and doc["changes"] == []
    assert any("feed.xml" in w for w in doc["previous"]["warnings"])
    feed = (tmp_path / "site" / "feed.xml").read_bytes()
    assert b"<entry>" not in feed and b"lol" not in feed
    assert doc["board"]["recipes"][RECIPE]["rollup"] == "CONFIRMED"


def test_an_oversized_or_deep_previous_board_is_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import generator.changes.previous as previous_module

    site = tmp_path / "previous"
    (site / "data").mkdir(parents=True)
    (site / "data" / "changes.json").write_text(
        json.dumps({"board": {"recipes": {}}, "pad": "x" * 5000}), encoding="utf-8"
    )
    monkeypatch.setattr(previous_module, "CHANGES_CAP", 1000)
    found = load_previous(str(site))
    assert found.board is None and "larger than 1000 bytes" in found.warnings[0]
    monkeypatch.undo()
    (site / "data" / "changes.json").write_text(
        '{"board": ' + "[" * 10_000 + "]" * 10_000 + "}", encoding="utf-8"
    )
    found = load_previous(str(site))
    assert found.board is None and "could not be read" in found.warnings[0]
    assert str(tmp_path) not in found.warnings[0]  # a folder is named by its last segment
