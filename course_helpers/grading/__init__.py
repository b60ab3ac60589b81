"""``python -m course_helpers grade``: headless grading for instructors (worker, sandbox,
answer-key redaction, tampering checks, reports). Never loaded by a learner's kernel."""
