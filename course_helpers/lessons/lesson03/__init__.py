"""Lesson 03: its exercises and their typical wrong answers, side by side."""
