"""`python -m coursekit`: the same command line as the `coursekit` script."""

from coursekit.cli import main

if __name__ == "__main__":
    main(prog_name="coursekit")
