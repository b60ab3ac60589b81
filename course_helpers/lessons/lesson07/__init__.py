"""Lesson 07: its exercises and their typical wrong answers, side by side."""
