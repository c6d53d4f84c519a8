"""Typed, located models of a course. Imports nothing else of coursekit."""

from coursekit.model.base import Location, Node, Source
from coursekit.model.documents import DOCUMENT_KINDS
from coursekit.model.tree import Book, Chapter, Course, ExerciseDoc, Lesson, Problem, Program

__all__ = [
    "DOCUMENT_KINDS",
    "Book",
    "Chapter",
    "Course",
    "ExerciseDoc",
    "Lesson",
    "Location",
    "Node",
    "Problem",
    "Program",
    "Source",
]
