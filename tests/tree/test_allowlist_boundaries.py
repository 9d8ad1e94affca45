"""Allowlist classification at its edges: a slug one hex digit from a listed source, identities
and issuers that differ from a listed one only by letter case or a suffix, and which entry wins
when a signer is listed twice."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.errors import AllowlistError
from generator.model import SignerClass, SignerIdentity, source_slug
from generator.tree.allowlist import UNLISTED, display_label, organisation_of, parse_allowlist

OAUTH = "https://github.com/login/oauth"
GH = "https://token.actions.githubusercontent.com"
ALICE = SignerIdentity(OAUTH, "alice@example.com")
WORKFLOW = "https://github.com/acme/aicr/.github/workflows/uat.yaml@refs/heads/main"
PATTERN = r"^https://github\.com/acme/aicr/\.github/workflows/uat\.yaml@refs/heads/[a-z]+$"


def _doc(first: str = "[]", community: str = "[]", partner: str = "[]") -> bytes:
    return (
        f"schemaVersion: 1.0.0\nfirstParty: {first}\ncommunity: {community}\npartner: {partner}\n"
    ).encode()


def _src(source: str, issuer: str = OAUTH) -> str:
    return f"[{{issuer: '{issuer}', source: '{source}'}}]"


def _pat(pattern: str = PATTERN, issuer: str = GH) -> str:
    return f"[{{issuer: '{issuer}', identityPattern: '{pattern}'}}]"


def _flip(hex_text: str, position: int) -> str:
    digit = "0" if hex_text[position] != "0" else "1"
    return hex_text[:position] + digit + hex_text[position + 1 :]


@pytest.mark.parametrize("position", [0, 12, 30, 31])
def test_a_source_one_hex_digit_from_the_signers_slug_does_not_list_it(position: int) -> None:
    slug = str(ALICE.slug)
    listed = parse_allowlist(_doc(first=_src(slug)), file="a.yaml").classify(ALICE)
    assert listed.allowlisted and listed.signer_class is SignerClass.FIRST_PARTY
    near = parse_allowlist(_doc(first=_src(_flip(slug, position))), file="a.yaml")
    assert near.classify(ALICE) == UNLISTED


def test_a_slug_sharing_a_prefix_with_a_listed_source_is_unlisted() -> None:
    """Two real signers whose slugs agree on their first hex digits: only the listed one is."""
    listed_signer = ALICE
    prefix_len = 0
    other = None
    for n in range(5000):
        candidate = SignerIdentity(OAUTH, f"user{n}@example.com")
        shared = 0
        while shared < 32 and str(candidate.slug)[shared] == str(listed_signer.slug)[shared]:
            shared += 1
        if shared > prefix_len:
            prefix_len, other = shared, candidate
    assert other is not None and prefix_len >= 2
    allowlist = parse_allowlist(_doc(community=_src(str(listed_signer.slug))), file="a.yaml")
    assert allowlist.classify(listed_signer).allowlisted
    assert allowlist.classify(other) == UNLISTED


@pytest.mark.parametrize(
    "identity",
    [
        WORKFLOW.replace("acme", "ACME"),
        WORKFLOW.replace("main", "Main"),
        WORKFLOW.upper(),
        WORKFLOW + "x/",
        WORKFLOW + "\n",
        "x" + WORKFLOW,
        WORKFLOW.replace("uat.yaml", "uatxyaml"),
    ],
    ids=["org-case", "ref-case", "upper", "suffix", "trailing-newline", "prefix", "dot-literal"],
)
def test_a_pattern_lists_exactly_its_identities(identity: str) -> None:
    allowlist = parse_allowlist(_doc(partner=_pat()), file="a.yaml")
    listed = allowlist.classify(SignerIdentity(GH, WORKFLOW))
    assert listed.allowlisted and listed.signer_class is SignerClass.PARTNER
    assert allowlist.classify(SignerIdentity(GH, identity)) == UNLISTED


@pytest.mark.parametrize("issuer", [GH.upper(), GH.replace("token", "Token"), GH + "/", OAUTH])
def test_a_pattern_needs_its_issuer_exactly(issuer: str) -> None:
    allowlist = parse_allowlist(_doc(first=_pat()), file="a.yaml")
    assert allowlist.classify(SignerIdentity(issuer, WORKFLOW)) == UNLISTED


def test_a_source_needs_its_issuer_exactly() -> None:
    """The slug covers the issuer: the same identity under a case variant is another signer."""
    allowlist = parse_allowlist(_doc(first=_src(str(ALICE.slug))), file="a.yaml")
    assert allowlist.classify(ALICE).allowlisted
    for issuer in (OAUTH.upper(), OAUTH.replace("oauth", "OAuth")):
        assert allowlist.classify(SignerIdentity(issuer, ALICE.identity)) == UNLISTED
    assert allowlist.classify(SignerIdentity(OAUTH, "Alice@example.com")) == UNLISTED


def test_a_source_match_wins_over_a_pattern_match() -> None:
    signer = SignerIdentity(GH, WORKFLOW)
    allowlist = parse_allowlist(
        _doc(first=_pat(), community=_src(str(signer.slug), GH)), file="a.yaml"
    )
    found = allowlist.classify(signer)
    assert found.allowlisted and found.signer_class is SignerClass.COMMUNITY
    assert found.entry is not None and found.entry.source == signer.slug


@pytest.mark.parametrize(
    ("klass", "expected"),
    [
        ("first", SignerClass.FIRST_PARTY),
        ("community", SignerClass.COMMUNITY),
        ("partner", SignerClass.PARTNER),
    ],
)
def test_each_class_key_gives_its_class(klass: str, expected: SignerClass) -> None:
    allowlist = parse_allowlist(_doc(**{klass: _src(str(ALICE.slug))}), file="a.yaml")
    found = allowlist.classify(ALICE)
    assert (found.allowlisted, found.signer_class) == (True, expected)


@pytest.mark.parametrize(
    "signer",
    [
        SignerIdentity(OAUTH, "alice@example.com\n"),
        SignerIdentity(OAUTH, "alice@example.com\r"),
        SignerIdentity(OAUTH + "\n", "alice@example.com"),
    ],
    ids=["identity-lf", "identity-cr", "issuer-lf"],
)
def test_a_signer_with_a_line_break_is_never_listed(signer: SignerIdentity) -> None:
    """Even when its slug is listed: such a signer cannot be displayed or matched safely."""
    slug = source_slug(signer.issuer, signer.identity)
    allowlist = parse_allowlist(_doc(first=_src(str(slug), issuer=OAUTH)), file="a.yaml")
    assert allowlist.classify(signer) == UNLISTED


@pytest.mark.parametrize(
    "signer",
    [SignerIdentity(OAUTH, ""), SignerIdentity("", WORKFLOW), SignerIdentity(GH, "")],
    ids=["oauth", "no-issuer", "gh"],
)
def test_a_signer_with_an_empty_part_is_never_listed(signer: SignerIdentity) -> None:
    """Such a signer has no slug at all: it is unlisted, never an error."""
    allowlist = parse_allowlist(
        _doc(first=_src(str(ALICE.slug)), partner=_pat(r"^@.*$")), file="a.yaml"
    )
    assert allowlist.classify(signer) == UNLISTED


def test_a_line_break_inside_a_pattern_match_is_never_listed() -> None:
    pattern = r"^https://github\.com/acme/aicr/\.github/workflows/uat\.yaml@refs/heads/.+$"
    allowlist = parse_allowlist(_doc(first=_pat(pattern)), file="a.yaml")
    assert allowlist.classify(SignerIdentity(GH, WORKFLOW)).allowlisted
    assert allowlist.classify(SignerIdentity(GH, WORKFLOW + "\nx")) == UNLISTED


def test_the_same_file_parses_to_equal_allowlists_with_a_stable_repr() -> None:
    """The compiled regexes are an implementation detail: two parses of one file are equal
    (cache keys compare them) and print the same (no object addresses in diagnostics)."""
    data = _doc(first=_pat(), community=_src(str(ALICE.slug)))
    one, two = parse_allowlist(data, file="a.yaml"), parse_allowlist(data, file="a.yaml")
    assert one == two
    assert repr(one) == repr(two)
    assert "0x" not in repr(one)


def test_a_pattern_re2_refuses_is_reported_without_writing_to_stderr(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """The error is the AllowlistError; RE2's own logger must not also write to stderr (fd 2),
    where it would interleave with the build's diagnostics."""
    pattern = r"^https://github\.com/acme/aicr/\.github/workflows/uat\.yaml@(?=x)refs$"
    with pytest.raises(AllowlistError, match="does not compile"):
        parse_allowlist(_doc(first=_pat(pattern)), file="a.yaml")
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize(
    ("ref", "listed", "unlisted"),
    [("[]|a]+", "|]a", "main"), ("[^]|a]+", "dev", "d|v")],
    ids=["bracket-first", "negated-bracket-first"],
)
def test_a_bar_inside_a_class_that_opens_with_a_bracket_is_not_alternation(
    ref: str, listed: str, unlisted: str
) -> None:
    """`[]|a]` and `[^]|a]` are one class each (a leading `]` is literal), so their `|` is a
    class member, not a top-level alternation: the pattern is accepted and matches as RE2 says."""
    head = "https://github.com/acme/aicr/.github/workflows/uat.yaml@"
    pattern = "^" + head.replace(".", r"\.") + ref + "$"
    allowlist = parse_allowlist(_doc(first=_pat(pattern)), file="a.yaml")
    assert allowlist.classify(SignerIdentity(GH, head + listed)).allowlisted
    assert allowlist.classify(SignerIdentity(GH, head + unlisted)) == UNLISTED


@pytest.mark.parametrize(
    ("ref", "listed", "unlisted"),
    [("[a|b]+", "b|a", "main"), ("v[0-9|]+", "v1|2", "v1.2")],
    ids=["between-members", "after-a-range"],
)
def test_a_bar_inside_a_class_after_another_member_is_not_alternation(
    ref: str, listed: str, unlisted: str
) -> None:
    """A class ends at its `]`, not at its first member: a `|` later inside it is a member."""
    head = "https://github.com/acme/aicr/.github/workflows/uat.yaml@"
    pattern = "^" + head.replace(".", r"\.") + ref + "$"
    allowlist = parse_allowlist(_doc(first=_pat(pattern)), file="a.yaml")
    assert allowlist.classify(SignerIdentity(GH, head + listed)).allowlisted
    assert allowlist.classify(SignerIdentity(GH, head + unlisted)) == UNLISTED


@pytest.mark.parametrize(
    "ref",
    [
        r"[a]|b",
        r"(a)|b",
        r"[]a]|b",
        r"[^]a]|b",
        r"\(a|b",
        r"main|",
        r"[^a]|b",
        r"[]]|b",
        r"[^]]|b",
    ],
    ids=[
        "after-class",
        "after-group",
        "after-bracket-class",
        "after-negated",
        "escaped-paren",
        "bar-last",
        "after-negated-one-member",
        "after-bracket-only-class",
        "after-negated-bracket-only-class",
    ],
)
def test_a_top_level_bar_after_a_class_or_group_is_refused(ref: str) -> None:
    pattern = r"^https://github\.com/acme/aicr@" + ref + "$"
    with pytest.raises(AllowlistError, match="too broad") as caught:
        parse_allowlist(_doc(first=_pat(pattern)), file="a.yaml")
    assert "top-level '|'" in caught.value.found


def test_a_pattern_whose_last_escape_precedes_no_at_sign_names_the_missing_at() -> None:
    """An escape as the very last character pair left of `$` is a literal, not a lone
    backslash: the pattern is refused for having no `@`."""
    with pytest.raises(AllowlistError, match="too broad") as caught:
        parse_allowlist(_doc(first=_pat(r"^https://github\.com/acme\.$")), file="a.yaml")
    assert "no unescaped '@'" in caught.value.found


def test_an_issuer_with_a_line_break_is_refused_naming_the_entry() -> None:
    data = _doc(community=f'[{{issuer: "{OAUTH}\\n", source: "{ALICE.slug}"}}]')
    with pytest.raises(AllowlistError, match="line break") as caught:
        parse_allowlist(data, file="a.yaml")
    assert caught.value.location is not None
    assert caught.value.location.key == "community[0].issuer"


@pytest.mark.parametrize(
    ("identity", "label", "org"),
    [
        ("https://github.com/acme/aicr@refs/heads/main", "acme/aicr", "acme"),
        ("https://github.com/acme@refs/heads/main", "github.com", None),
        ("https://GitHub.com/Acme/aicr/x.yaml@r", "Acme/aicr", "acme"),
        ("http://github.com/acme/aicr/x.yaml@r", "github.com", None),
        ("https://github.com.evil/acme/aicr@r", "github.com.evil", None),
        ("https://gitlab.com/g/p/x@r", "g/p", "g"),
        ("https://github.com/acme/aicr/x.yaml@r\n", None, None),
        ("1+h@USERS.noreply.github.com", "h", None),
        ("1+h+x@users.noreply.github.com", "h+x", None),
        ("1+h@u\u017fers.noreply.github.com", "1+h", None),
        ("h@users.noreply.github.com", "h", None),
        ("a+b@example.com", "a+b", None),
        ("@example.com", None, None),
        ("https://:80/x", None, None),
        ("", "unknown signer", None),
    ],
    ids=[
        "two-segments",
        "one-segment",
        "host-case",
        "not-https",
        "lookalike-host",
        "gitlab",
        "line-break",
        "noreply-plus",
        "noreply-second-plus",
        "noreply-lookalike-long-s",
        "noreply-no-plus",
        "plus-elsewhere",
        "empty-local-part",
        "no-host",
        "empty",
    ],
)
def test_display_label_and_organisation_at_their_edges(
    identity: str, label: str | None, org: str | None
) -> None:
    """None for `label`: the signer's slug (nothing better is safe to show); None for `org`:
    the identity itself (not a forge workflow, not allowlisted)."""
    signer = SignerIdentity(OAUTH, identity)
    expected = label if label is not None else str(signer.slug)
    assert display_label(signer, UNLISTED) == expected
    assert organisation_of(signer, UNLISTED) == (org if org is not None else identity)


@pytest.mark.parametrize("backslashes", [0, 1, 2, 3, 4])
def test_the_final_dollar_counts_as_escaped_after_an_odd_run_of_backslashes(
    backslashes: int,
) -> None:
    """`\\$` (and `\\\\\\$`) is a literal dollar, so the pattern is not anchored and is refused;
    after an even run (`\\\\$`) the backslashes escape each other and `$` anchors."""
    pattern = r"^https://github\.com/acme/aicr@main" + "\\" * backslashes + "$"
    data = _doc(first=_pat(pattern))
    if backslashes % 2:
        with pytest.raises(AllowlistError, match="too broad") as caught:
            parse_allowlist(data, file="a.yaml")
        assert "unescaped $" in caught.value.found
    else:
        assert parse_allowlist(data, file="a.yaml").entries[0].identity_pattern == pattern


def test_re2_s_reason_for_refusing_a_pattern_is_quoted_as_text() -> None:
    """RE2 reports its reason in bytes: the diagnostic carries it decoded, as RE2 wrote it."""
    pattern = r"^https://github\.com/acme/aicr/\.github/workflows/uat\.yaml@(?=x)refs$"
    with pytest.raises(AllowlistError) as caught:
        parse_allowlist(_doc(first=_pat(pattern)), file="a.yaml")
    found = str(caught.value.found)
    assert found.endswith(": invalid perl operator: (?="), found
    assert "b'" not in found


@pytest.mark.parametrize("display", [None, "recipes/evidence/allowlist.yaml"])
def test_a_loaded_allowlist_names_its_file_as_displayed(
    tmp_path: Path, display: str | None
) -> None:
    """Errors name the file as the caller shows it (the tree-relative path), else its name;
    never the machine's path."""
    from generator.tree.allowlist import load_allowlist

    path = tmp_path / "allowlist.yaml"
    path.write_bytes(b"schemaVersion: 9.9.9\n")
    with pytest.raises(AllowlistError) as caught:
        load_allowlist(path, display=display)
    shown = display if display is not None else "allowlist.yaml"
    assert str(caught.value.location.file) == shown
    assert str(tmp_path) not in str(caught.value.diagnostics())


def test_two_patterns_whose_prefixes_differ_right_after_an_escape_do_not_overlap() -> None:
    """The literal prefix keeps every character after an escape: `x\\.io` and `x\\.jo` are
    different prefixes, so both entries stand."""
    first = _pat(r"^https://x\.io/a@refs/heads/main$")
    second = _pat(r"^https://x\.jo/a@refs/heads/main$")
    listed = parse_allowlist(_doc(first=first, community=second), file="a.yaml")
    assert len(listed.entries) == 2


def test_an_overlap_names_the_shared_literal_prefix_as_written() -> None:
    first = _pat(r"^https://x\.io/a@refs/heads/main$")
    second = _pat(r"^https://x\.io/a@refs/tags/v1$")
    with pytest.raises(AllowlistError, match="overlapping") as caught:
        parse_allowlist(_doc(first=first, community=second), file="a.yaml")
    assert "same prefix 'https://x.io/a' as " in caught.value.found


@pytest.mark.parametrize(
    "pattern",
    [
        r"^https://x\.io/a@refs/heads/a\.|.*$",
        r"^https://x\.io/a\(@refs/heads/main|.*$",
        r"^https://x\.io/a\[@refs/heads/main|.*$",
    ],
    ids=["bar-after-an-escape", "escaped-paren-before-at", "escaped-bracket-before-at"],
)
def test_a_top_level_bar_next_to_an_escape_is_still_refused(pattern: str) -> None:
    """An escaped character is one character: the `|` after it, or after an `@` that follows
    an escaped `(` or `[` on the left, is at the top level and escapes the anchors."""
    with pytest.raises(AllowlistError, match="too broad") as caught:
        parse_allowlist(_doc(first=_pat(pattern)), file="a.yaml")
    assert "top-level '|'" in caught.value.found
