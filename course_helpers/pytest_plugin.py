"""The name instructors' pytest configs use (``-p course_helpers.pytest_plugin``).

The plugin itself is :mod:`course_helpers.testing.pytest_plugin`; this module only
re-exports its hooks, so either name loads the same plugin. Name only one of them.
"""

from course_helpers.testing.pytest_plugin import *  # noqa: F403
from course_helpers.testing.pytest_plugin import __all__  # noqa: F401
