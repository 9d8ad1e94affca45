"""The build benchmark: synthetic signed evidence trees (`bench.gen`) and the runner (`bench.run`).

Run it with `python -m bench.run --sizes 100,1000,10000`. Nothing here is imported by the
generator itself; it drives the public build entry points the way a user's `make` would.
"""
