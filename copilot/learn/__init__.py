"""Teaching mode: lessons (data in knowledge/lessons/), grading on the emulator, hints.

Imports no UI library. Public API:
- `load_lessons()`, `get_lesson(ref)`, `Lesson`, `Hint`
- `grade(lesson, source, chip=...) -> Grade`: the sim backend's check path, every failure turned
  into a message about the learner's own code (rule, line, the card's fix)
"""

from copilot.learn.grade import CaseOutcome, Finding, Grade, grade
from copilot.learn.lessons import LESSONS_DIR, Hint, Lesson, LessonError, get_lesson, load_lessons

__all__ = ["CaseOutcome", "Finding", "Grade", "grade", "LESSONS_DIR", "Hint", "Lesson", "LessonError",
           "get_lesson", "load_lessons"]
