"""`python -m generator`: the same command line as `evidence-dashboard`."""

from generator.cli import run

if __name__ == "__main__":
    run()
