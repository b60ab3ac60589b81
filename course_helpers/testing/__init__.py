"""The course's pytest plugin and the forked kernels that make ``pytest --nbval`` fast. For CI."""
