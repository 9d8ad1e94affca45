"""Evidence fakes shared with the other pure-core test folders (tests/_evidence_fakes.py)."""

from collections.abc import Iterator

import pytest

from tests._evidence_fakes import f
from tests.data.gotruth import GoMarshal, go_tool

__all__ = ["f"]


@pytest.fixture(scope="module")
def go(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GoMarshal]:
    """Go's encoding/json as a long-running process (a test using it is marked `go`)."""
    tool = go_tool()
    if tool is None:
        pytest.skip("needs Go (Debian golang-go; scripts/install-system-deps.sh installs it)")
    marshal = GoMarshal(tool, tmp_path_factory.mktemp("go"))
    yield marshal
    marshal.close()
