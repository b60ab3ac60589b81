"""Lesson 11: its exercises and their typical wrong answers, side by side."""
