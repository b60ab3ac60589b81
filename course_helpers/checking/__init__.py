"""``check()`` and everything behind it: submissions, judges, diagnosis, misconception
matching, method checks, feedback, hints, quizzes and progress (see docs/architecture.md)."""
