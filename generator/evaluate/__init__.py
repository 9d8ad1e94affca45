"""The evaluation of an evidence tree, stage by stage (the narrative is `generator.build`).

- `engine`: trust root, bundle source and verdict cache, built once (`Engines`).
- `verification`: the cache split and the `Verifier` interface (`InProcess`).
- `pool`: the speed machinery (worker processes, shared strings, GC pauses).
- `assess`: what a verdict means (record, board entry, freshness).
- `refs`: `--bundle-refs` entries.
- `evaluation`: the stages of one evaluation, pure of output (`evaluate`).
- `perrecipe`, `products`: incremental evaluation, each unchanged recipe reused from its product.
- `memoize`: the evaluation memo of one build.
- `output`: staging, the data files and the site, the atomic swap.
- `summary`, `clock`, `single` (the `verify` command).

The options they read are `generator.options`.
"""

from generator.evaluate.evaluation import Evaluation, evaluate
from generator.evaluate.summary import BuildSummary

__all__ = ["BuildSummary", "Evaluation", "evaluate"]
