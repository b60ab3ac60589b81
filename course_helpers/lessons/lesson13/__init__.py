"""Lesson 13: its exercises and their typical wrong answers, side by side."""
