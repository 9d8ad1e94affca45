"""What a build did (its summary) and the checks made on its counts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from generator.buildmemo import Counts
from generator.cacheauth import failures
from generator.errors import BuildError
from generator.options import BuildOptions

__all__ = ["BuildSummary", "check_unverified", "summarize"]


@dataclass(frozen=True)
class BuildSummary:
    """What a build did, for the terminal and `--format json`."""

    out: str
    pointers: int
    verified: int
    rejected: int
    pending: int
    no_verdict: int
    recipes: int
    build_time: str
    from_memo: bool = False
    """The evaluation was the cached one of an identical earlier build (generator.buildmemo)."""
    warnings: tuple[str, ...] = ()
    """Output size warnings (generator.outputsize)."""
    auth_failures: int = 0
    """Cache entries that failed authentication (generator.cacheauth), read as misses."""
    wrote: bool = True
    """False when `--out` already held, byte for byte, the site this build would publish."""

    def as_dict(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "out": self.out,
            "pointers": self.pointers,
            "verified": self.verified,
            "rejected": self.rejected,
            "pending": self.pending,
            "noVerdict": self.no_verdict,
            "recipes": self.recipes,
            "buildTime": self.build_time,
            "exit": 0,
            "evaluation": "reused" if self.from_memo else "evaluated",
            "output": "written" if self.wrote else "unchanged",
            "cache": {"authenticationFailures": self.auth_failures},
        }
        if self.warnings:
            doc["warnings"] = list(self.warnings)
        return doc

    def describe(self) -> str:
        reused = "; nothing changed, the cached evaluation was reused" if self.from_memo else ""
        if not self.wrote:
            reused = "; nothing changed, and the folder already holds this site (nothing written)"
        if self.auth_failures:
            reused += f"; {self.auth_failures} cache entries failed authentication"
        return (
            f"built {self.out}: {self.recipes} recipes, {self.pointers} pointers "
            f"({self.verified} verified, {self.rejected} rejected, {self.pending} pending, "
            f"{self.no_verdict} without a verdict), build time {self.build_time}{reused}"
            + "".join(f"\nwarning: {w}" for w in self.warnings)
        )


def check_unverified(options: BuildOptions, counts: Counts) -> None:
    """Refuse a build where more pointers than `--max-unverified` percent got no verdict."""
    no_verdict, pointers = counts.no_verdict, counts.pointers
    if options.output.max_unverified is not None and pointers:
        share = 100.0 * no_verdict / pointers
        if share > options.output.max_unverified:
            raise BuildError(
                "too many pointers ended without a verdict",
                expected=f"at most {options.output.max_unverified}%",
                found=f"{share:.1f}% ({no_verdict} of {pointers})",
                hint="check the registry or supply bundles with --oci-layout; "
                "the previous site was kept",
            )


def summarize(
    options: BuildOptions,
    counts: Counts,
    recipes: int,
    *,
    from_memo: bool,
    warnings: tuple[str, ...] = (),
    wrote: bool = True,
) -> BuildSummary:
    """The summary of a build that wrote `options.output.out` with these counts."""
    return BuildSummary(
        out=str(options.output.out),
        pointers=counts.pointers,
        verified=counts.verified,
        rejected=counts.rejected,
        pending=counts.pending,
        no_verdict=counts.no_verdict,
        recipes=recipes,
        build_time=counts.build_time,
        from_memo=from_memo,
        warnings=warnings,
        auth_failures=len(failures()),
        wrote=wrote,
    )
