"""coursekit: lint, verify and scaffold a multi-book technical course."""

__version__ = "0.2.0"

DISTRIBUTION = "coursekit-lint"  # the package index name ("coursekit" there is another project)
# The project's home until it has a public one (`.invalid` never resolves); pyproject's
# [project.urls] says the same, and SARIF's informationUri uses whichever is installed.
HOMEPAGE = "https://coursekit-lint.invalid/"
