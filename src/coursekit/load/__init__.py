"""From files to a located `Course`."""

from coursekit.load.loader import LoadResult, load_course

__all__ = ["LoadResult", "load_course"]
