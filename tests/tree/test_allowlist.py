"""Allowlist schema, anti-sybil validation, RE2 semantics, classification and display helpers."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
import re2

from generator.errors import AllowlistError, InputError
from generator.model import SignerClass, SignerIdentity, source_slug
from generator.tree.allowlist import (
    UNLISTED,
    display_label,
    load_allowlist,
    organisation_of,
    parse_allowlist,
)

ISS = "https://token.actions.githubusercontent.com"
OAUTH = "https://github.com/login/oauth"
GOOD_PATTERN = r"^https://github\.com/NVIDIA/aicr/\.github/workflows/uat-aws\.yaml@refs/heads/.+$"
SLUG_A = "7c4c0edc8c765a95a0f3afdb3bbb8e91"
SLUG_B = "9d71833b5a62cb2928c1b40fffc6c20f"


def _doc(
    *, first: str = "[]", community: str = "[]", partner: str = "[]", version: str = "1.0.0"
) -> bytes:
    return (
        f"schemaVersion: {version}\nfirstParty: {first}\ncommunity: {community}\n"
        f"partner: {partner}\n"
    ).encode()


def _pat(pattern: str, issuer: str = ISS, label: str = "") -> str:
    extra = f", label: {label}" if label else ""
    return f"[{{issuer: '{issuer}', identityPattern: '{pattern}'{extra}}}]"


def _src(source: str, issuer: str = OAUTH) -> str:
    return f"[{{issuer: '{issuer}', source: '{source}'}}]"


VALID: list[tuple[str, bytes]] = [
    ("minimal", _doc()),
    ("version-1.0", _doc(version='"1.0"')),
    ("version-1.0.3", _doc(version="1.0.3")),
    ("pattern", _doc(first=_pat(GOOD_PATTERN))),
    ("slug", _doc(community=_src(SLUG_A))),
    ("slug-in-first-party", _doc(first=_src(SLUG_A))),
    ("pattern-in-partner", _doc(partner=_pat(GOOD_PATTERN))),
    ("null-classes", b"schemaVersion: 1.0.0\nfirstParty:\ncommunity: ~\n"),
    ("escaped-at-left", _doc(first=_pat(r"^https://x\.io/a\@b@refs/.+$"))),
    ("group-alternation-right", _doc(first=_pat(r"^https://x\.io/a@refs/heads/(main|dev)$"))),
    ("class-pipe-right", _doc(first=_pat(r"^https://x\.io/a@refs/[|a]+$"))),
    (
        "same-prefix-other-issuer",
        _doc(first=_pat(GOOD_PATTERN), partner=_pat(GOOD_PATTERN, issuer="https://other")),
    ),
    (
        "empty-label-is-unset",
        _doc(
            community=f"[{{issuer: '{OAUTH}', source: '{SLUG_A}', "
            f"label: ''}}, {{issuer: '{OAUTH}', "
            f"source: '{SLUG_B}', label: ''}}]"
        ),
    ),
]


@pytest.mark.parametrize("data", [v[1] for v in VALID], ids=[v[0] for v in VALID])
def test_valid_allowlists(data: bytes) -> None:
    allowlist = parse_allowlist(data, file="evidence/allowlist.yaml")
    assert allowlist.digest == "sha256:" + hashlib.sha256(data).hexdigest()


INVALID: list[tuple[str, bytes, str]] = [
    ("empty-document", b"", "schemaVersion"),
    ("not-mapping", b"- a\n", "not a mapping"),
    ("version-2", _doc(version="2.0.0"), "schemaVersion"),
    ("version-1.1", _doc(version="1.1"), "schemaVersion"),
    ("unknown-top-key", _doc() + b"partners: []\n", "unknown top-level key"),
    ("class-not-list", b"schemaVersion: 1.0.0\ncommunity: {a: 1}\n", "not a list"),
    ("entry-not-map", _doc(community="[x]"), "not a mapping"),
    (
        "identity-key",
        _doc(community=f"[{{issuer: '{OAUTH}', identity: 'me@x.org'}}]"),
        "cleartext identity",
    ),
    (
        "unknown-entry-key",
        _doc(community=f"[{{issuer: '{OAUTH}', source: '{SLUG_A}', lable: x}}]"),
        "unknown entry key",
    ),
    ("no-issuer", _doc(community=f"[{{source: '{SLUG_A}'}}]"), "no issuer"),
    ("empty-issuer", _doc(community=f"[{{issuer: '', source: '{SLUG_A}'}}]"), "no issuer"),
    ("neither", _doc(community=f"[{{issuer: '{OAUTH}'}}]"), "exactly one"),
    (
        "both",
        _doc(
            community=f"[{{issuer: '{ISS}', source: '{SLUG_A}', "
            f"identityPattern: '{GOOD_PATTERN}'}}]"
        ),
        "exactly one",
    ),
    ("slug-12-hex", _doc(community=_src("7c4c0edc8c76")), "32-hex"),
    ("slug-upper", _doc(community=_src(SLUG_A.upper())), "32-hex"),
    ("slug-64-hex", _doc(community=_src("a" * 64)), "32-hex"),
    (
        "dup-source-across-classes",
        _doc(first=_src(SLUG_A), community=_src(SLUG_A)),
        "duplicate source",
    ),
    (
        "dup-label",
        _doc(
            first=_pat(GOOD_PATTERN, label="x"),
            community=f"[{{issuer: '{OAUTH}', source: '{SLUG_A}', label: x}}]",
        ),
        "duplicate label",
    ),
    (
        "overlap",
        _doc(first=_pat(GOOD_PATTERN), partner=_pat(GOOD_PATTERN.replace(".+$", "main$"))),
        "overlapping",
    ),
    (
        "overlap-escapes-removed",
        _doc(first=_pat(r"^https://a\.b/c@x$"), community=_pat(r"^https://a\.b/c@y.*$")),
        "overlapping",
    ),
    ("no-caret", _doc(first=_pat(GOOD_PATTERN[1:])), "too broad"),
    ("no-dollar", _doc(first=_pat(GOOD_PATTERN[:-1])), "too broad"),
    ("escaped-dollar", _doc(first=_pat(r"^https://x\.io/a@b\$")), "too broad"),
    ("no-at", _doc(first=_pat(r"^https://x\.io/a/.+$")), "too broad"),
    ("escaped-at-only", _doc(first=_pat(r"^https://x\.io/a\@.+$")), "too broad"),
    ("dot-left", _doc(first=_pat(r"^https://github.com/NVIDIA/aicr@.+$")), "too broad"),
    ("star-left", _doc(first=_pat(r"^https://github\.com/.*@.+$")), "too broad"),
    ("class-left", _doc(first=_pat(r"^https://github\.com/[a-z]+@.+$")), "too broad"),
    ("group-left", _doc(first=_pat(r"^https://github\.com/(a|b)@.+$")), "too broad"),
    ("brace-left", _doc(first=_pat(r"^https://github\.com/a{1,3}@.+$")), "too broad"),
    ("backslash-d-left", _doc(first=_pat(r"^https://github\.com/a\d@.+$")), "too broad"),
    ("backslash-Q-left", _doc(first=_pat(r"^\Qhttps://x.io/a\E@.+$")), "too broad"),
    ("top-level-alternation", _doc(first=_pat(r"^https://x\.io/a@main|.*$")), "too broad"),
    ("lookahead", _doc(first=_pat(r"^https://x\.io/a@(?=refs).+$")), "RE2"),
    ("lookbehind", _doc(first=_pat(r"^https://x\.io/a@.+(?<!x)$")), "RE2"),
    ("backreference", _doc(first=_pat(r"^https://x\.io/a@(refs)\1$")), "RE2"),
    ("unbalanced", _doc(first=_pat(r"^https://x\.io/a@(refs$")), "RE2"),
    (
        "label-not-str",
        _doc(community=f"[{{issuer: '{OAUTH}', source: '{SLUG_A}', label: 5}}]"),
        "not a string",
    ),
    ("dup-yaml-key", b"schemaVersion: 1.0.0\nschemaVersion: 1.0.0\n", "duplicate"),
]


@pytest.mark.parametrize(
    ("data", "fragment"), [v[1:] for v in INVALID], ids=[v[0] for v in INVALID]
)
def test_invalid_allowlists(data: bytes, fragment: str) -> None:
    with pytest.raises(AllowlistError) as info:
        parse_allowlist(data, file="evidence/allowlist.yaml")
    error = info.value
    assert (
        fragment in error.message
        or fragment in (error.found or "")
        or fragment in (error.location.key or "" if error.location else "")
    )
    assert error.location is not None and error.location.file == "evidence/allowlist.yaml"


# ------------------------------------------------------------------ RE2 semantics


def _opts() -> Any:
    options = re2.Options()
    options.log_errors = False
    return options


def test_re2_dollar_is_end_of_text() -> None:
    regex = re2.compile(r"^a@b$", _opts())
    assert regex.search("a@b") is not None
    assert regex.search("a@b\n") is None
    assert regex.fullmatch("a@b\n") is None


def test_re2_digit_class_is_ascii_only() -> None:
    regex = re2.compile(r"^x@\d+$", _opts())
    assert regex.fullmatch("x@123") is not None
    assert regex.fullmatch("x@\u0661\u0662") is None  # Arabic-Indic digits


@pytest.mark.parametrize("pattern", [r"a(?=b)", r"a(?!b)", r"(?<=a)b", r"(a)\1"])
def test_re2_rejects_perl_only_syntax(pattern: str) -> None:
    with pytest.raises(re2.error):
        re2.compile(pattern, _opts())


def _allowlist(first: str = "[]", community: str = "[]", partner: str = "[]") -> Any:
    return parse_allowlist(_doc(first=first, community=community, partner=partner), file="a")


def test_pattern_does_not_match_before_trailing_newline() -> None:
    allowlist = _allowlist(first=_pat(r"^https://x\.io/a@refs/heads/main$"))
    good = SignerIdentity(ISS, "https://x.io/a@refs/heads/main")
    assert allowlist.classify(good).allowlisted
    assert allowlist.classify(SignerIdentity(ISS, good.identity + "\n")) == UNLISTED


def test_pattern_is_a_full_match() -> None:
    allowlist = _allowlist(first=_pat(r"^https://x\.io/a@refs/heads/(main|dev)$"))
    assert allowlist.classify(SignerIdentity(ISS, "https://x.io/a@refs/heads/dev")).allowlisted
    assert not allowlist.classify(
        SignerIdentity(ISS, "https://x.io/a@refs/heads/devil")
    ).allowlisted
    assert not allowlist.classify(
        SignerIdentity(ISS, "evil https://x.io/a@refs/heads/dev")
    ).allowlisted


def test_unicode_digit_does_not_match_pattern() -> None:
    allowlist = _allowlist(first=_pat(r"^https://x\.io/a@refs/pull/\d+$"))
    assert allowlist.classify(SignerIdentity(ISS, "https://x.io/a@refs/pull/42")).allowlisted
    assert not allowlist.classify(
        SignerIdentity(ISS, "https://x.io/a@refs/pull/\u0664\u0662")
    ).allowlisted


# ------------------------------------------------------------------ classification


def _slug_entry(identity: str, issuer: str = OAUTH, label: str = "") -> str:
    extra = f", label: {label}" if label else ""
    return f"{{issuer: '{issuer}', source: '{source_slug(issuer, identity)}'{extra}}}"


UAT = "https://github.com/NVIDIA/aicr/.github/workflows/uat-aws.yaml@refs/heads/main"
FULL = _allowlist(
    first=_pat(GOOD_PATTERN, label="uat-aws"),
    community=f"[{_slug_entry('me@x.org')}, {{issuer: '{ISS}', identityPattern: "
    f"'^https://github\\.com/acme/ci/\\.github/workflows/e\\.yaml@refs/.+$'}}]",
    partner=f"[{_slug_entry(UAT, issuer=ISS, label='uat-as-partner-slug')}]",
)

CLASSIFY: list[tuple[str, SignerIdentity, SignerClass, bool, str | None]] = [
    (
        "pattern-first-party",
        SignerIdentity(ISS, UAT.replace("main", "dev")),
        SignerClass.FIRST_PARTY,
        True,
        "uat-aws",
    ),
    (
        "slug-beats-pattern",
        SignerIdentity(ISS, UAT),
        SignerClass.PARTNER,
        True,
        "uat-as-partner-slug",
    ),
    ("slug-community", SignerIdentity(OAUTH, "me@x.org"), SignerClass.COMMUNITY, True, None),
    (
        "slug-needs-same-issuer-hash",
        SignerIdentity(ISS, "me@x.org"),
        SignerClass.COMMUNITY,
        False,
        None,
    ),
    (
        "pattern-community",
        SignerIdentity(ISS, "https://github.com/acme/ci/.github/workflows/e.yaml@refs/tags/v1"),
        SignerClass.COMMUNITY,
        True,
        None,
    ),
    (
        "pattern-wrong-issuer",
        SignerIdentity(OAUTH, UAT.replace("main", "dev")),
        SignerClass.COMMUNITY,
        False,
        None,
    ),
    (
        "pattern-tags-not-heads",
        SignerIdentity(ISS, UAT.replace("heads", "tags")),
        SignerClass.COMMUNITY,
        False,
        None,
    ),
    ("unlisted", SignerIdentity(OAUTH, "someone@else.org"), SignerClass.COMMUNITY, False, None),
    ("newline-identity", SignerIdentity(OAUTH, "me@x.org\n"), SignerClass.COMMUNITY, False, None),
    ("newline-issuer", SignerIdentity(ISS + "\n", UAT), SignerClass.COMMUNITY, False, None),
]


@pytest.mark.parametrize(
    ("signer", "klass", "listed", "label"), [c[1:] for c in CLASSIFY], ids=[c[0] for c in CLASSIFY]
)
def test_classify(
    signer: SignerIdentity, klass: SignerClass, listed: bool, label: str | None
) -> None:
    result = FULL.classify(signer)
    assert result.signer_class is klass
    assert result.allowlisted is listed
    assert (result.entry is not None) is listed
    if label is not None:
        assert result.entry is not None and result.entry.label == label


def test_entries_keep_class_order_and_position() -> None:
    classes = [e.signer_class for e in FULL.entries]
    assert classes == [
        SignerClass.FIRST_PARTY,
        SignerClass.COMMUNITY,
        SignerClass.COMMUNITY,
        SignerClass.PARTNER,
    ]
    assert [e.position for e in FULL.entries] == [0, 0, 1, 0]


def test_newline_collision_is_not_a_match() -> None:
    # issuer "a", identity "b\nc" hashes like issuer "a\nb", identity "c"
    allowlist = _allowlist(
        community=f"[{{issuer: 'a', source: '{source_slug('a', 'b' + chr(10) + 'c')}'}}]"
    )
    assert not allowlist.classify(SignerIdentity("a", "b\nc")).allowlisted
    assert not allowlist.classify(SignerIdentity("a\nb", "c")).allowlisted


# ------------------------------------------------------------------ files


def test_load_allowlist_reads_bounded(tmp_path: Path) -> None:
    path = tmp_path / "allowlist.yaml"
    path.write_bytes(_doc(community=_src(SLUG_A)))
    assert len(load_allowlist(path).entries) == 1
    link = tmp_path / "link.yaml"
    link.symlink_to(path)
    with pytest.raises(InputError):
        load_allowlist(link)
    big = tmp_path / "big.yaml"
    big.write_bytes(_doc() + b"#" * (1024 * 1024))
    with pytest.raises(InputError):
        load_allowlist(big)


# ------------------------------------------------------------------ display and organisation

LABEL_CASES: list[tuple[str, SignerIdentity, str]] = [
    (
        "github-workflow",
        SignerIdentity(
            ISS, "https://github.com/yuanchen8911/aicr/.github/workflows/p.yaml@refs/heads/x"
        ),
        "yuanchen8911/aicr",
    ),
    (
        "gitlab-ci",
        SignerIdentity(
            "https://gitlab.com", "https://gitlab.com/grp/proj//.gitlab-ci.yml@refs/heads/main"
        ),
        "grp/proj",
    ),
    (
        "noreply",
        SignerIdentity(OAUTH, "54385449+ramessesii2@users.noreply.github.com"),
        "ramessesii2",
    ),
    ("email", SignerIdentity(OAUTH, "yuanchen97@gmail.com"), "yuanchen97"),
    (
        "other-url",
        SignerIdentity("https://accounts.example", "https://ci.example.org/job/7"),
        "ci.example.org",
    ),
]


@pytest.mark.parametrize(
    ("signer", "label"), [c[1:] for c in LABEL_CASES], ids=[c[0] for c in LABEL_CASES]
)
def test_display_label_without_entry(signer: SignerIdentity, label: str) -> None:
    shown = display_label(signer, UNLISTED)
    assert shown == label
    if "@" in signer.identity and "://" not in signer.identity:
        assert signer.identity not in shown


def test_display_label_prefers_entry_label() -> None:
    signer = SignerIdentity(ISS, UAT.replace("main", "dev"))
    assert display_label(signer, FULL.classify(signer)) == "uat-aws"


def test_display_label_falls_back_to_slug() -> None:
    signer = SignerIdentity("urn:x", "opaque-subject")
    assert display_label(signer, UNLISTED) == source_slug("urn:x", "opaque-subject")


ORG_CASES: list[tuple[str, SignerIdentity, str]] = [
    ("workflow-org-lowercased", SignerIdentity(ISS, UAT), "nvidia"),
    (
        "two-workflows-one-org",
        SignerIdentity(
            ISS, "https://github.com/NVIDIA/other/.github/workflows/x.yaml@refs/heads/main"
        ),
        "nvidia",
    ),
    ("unlisted-email-is-identity", SignerIdentity(OAUTH, "someone@else.org"), "someone@else.org"),
]


@pytest.mark.parametrize(
    ("signer", "org"), [c[1:] for c in ORG_CASES], ids=[c[0] for c in ORG_CASES]
)
def test_organisation_of(signer: SignerIdentity, org: str) -> None:
    assert organisation_of(signer, FULL.classify(signer)) == org


def test_organisation_of_allowlisted_person_is_its_entry() -> None:
    signer = SignerIdentity(OAUTH, "me@x.org")
    classification = FULL.classify(signer)
    assert classification.allowlisted
    assert organisation_of(signer, classification) == source_slug(OAUTH, "me@x.org")
    labelled = _allowlist(community=f"[{_slug_entry('me@x.org', label='acme')}]")
    assert organisation_of(signer, labelled.classify(signer)) == "acme"
