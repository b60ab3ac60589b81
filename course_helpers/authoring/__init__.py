"""``python -m course_helpers build``: exercise notebooks generated from the solutions, and
every notebook executed with its outputs stored. For authors and CI."""
