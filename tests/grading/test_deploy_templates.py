"""The cluster templates in deploy/: each validated against its published schema with a tool
from PyPI, each validator shown to refuse a broken copy, and the SLURM scripts run for real.

Validators (installed with the test extra): kubernetes-validate (the Kubernetes OpenAPI
schemas, --strict), check-jsonschema's vendored GitHub workflow schema, hadolint for the
Containerfile, shellcheck for every shell script. SLURM publishes no schema: its #SBATCH
options are checked against the sbatch manual's option list (schemas/sbatch-options.txt)
and the scripts are run with the variables SLURM sets."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from ci_calls import make_calls

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
BIN = Path(sys.executable).parent
FIXTURES = Path(__file__).parents[1] / "fixtures" / "grading"
JOB = DEPLOY / "kubernetes" / "grading-job.yaml"
WORKFLOWS = sorted((DEPLOY / "github").glob("*.yml"))
SBATCH = sorted((DEPLOY / "slurm").glob("*.sbatch"))


def _tool(name: str, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / name), *map(str, args)], capture_output=True, text=True, cwd=cwd
    )


def _broken_copy(tmp_path: Path, source: Path, old: str, new: str) -> Path:
    text = source.read_text()
    assert old in text
    copy = tmp_path / source.name
    copy.write_text(text.replace(old, new, 1))
    return copy


def test_the_kubernetes_job_is_valid_and_the_validator_would_say_otherwise(tmp_path):
    done = _tool("kubernetes-validate", "--strict", JOB)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = _broken_copy(tmp_path, JOB, "completionMode: Indexed", "completionMod: Indexed")
    assert _tool("kubernetes-validate", "--strict", broken).returncode != 0


def test_the_kubernetes_job_grades_one_shard_per_pod_locked_down():
    job, policy, merge = yaml.safe_load_all(JOB.read_text())
    spec = job["spec"]
    shards = spec["completions"]
    assert spec["completionMode"] == "Indexed" and spec["parallelism"] == shards
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert f'--shard "$shard/{shards}"' in container["args"][0]
    assert "JOB_COMPLETION_INDEX + 1" in container["args"][0]
    assert container["resources"]["limits"]["memory"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    mounts = {m["mountPath"]: m for m in container["volumeMounts"]}
    assert mounts["/submissions"]["readOnly"] is True and "/results" in mounts
    labels = spec["template"]["metadata"]["labels"]
    assert policy["kind"] == "NetworkPolicy" and policy["spec"]["egress"] == []
    assert policy["spec"]["podSelector"]["matchLabels"] == labels
    assert f"-ge {shards} ]" in merge["spec"]["template"]["spec"]["containers"][0]["args"][0]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_the_github_workflows_are_valid_and_the_validator_would_say_otherwise(workflow, tmp_path):
    schema = "vendor.github-workflows"
    done = _tool("check-jsonschema", "--builtin-schema", schema, workflow)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = _broken_copy(tmp_path, workflow, "runs-on:", "run-on:")
    assert _tool("check-jsonschema", "--builtin-schema", schema, broken).returncode != 0


def test_the_class_workflow_has_one_matrix_job_per_shard():
    workflow = yaml.safe_load((DEPLOY / "github" / "grade-class.yml").read_text())
    grade = workflow["jobs"]["grade"]
    shards = grade["strategy"]["matrix"]["shard"]
    assert shards == list(range(1, int(grade["env"]["SHARDS"]) + 1))
    assert workflow["jobs"]["merge"]["needs"] == "grade"
    assert workflow["permissions"] == {"contents": "read"}


def test_the_learner_workflow_grades_with_the_instructors_pinned_course():
    workflow = yaml.safe_load((DEPLOY / "github" / "autograde-learner.yml").read_text())
    steps = workflow["jobs"]["grade"]["steps"]
    grader = next(s for s in steps if s.get("with", {}).get("path") == "grader")
    assert grader["with"]["ref"] == "${{ vars.COURSE_REF }}"
    install = next(s for s in steps if s.get("name") == "Install the grader")
    assert "-e grader" in install["run"]  # never the learner's own course_helpers/


def test_the_containerfile_passes_hadolint_and_hadolint_would_say_otherwise(tmp_path):
    containerfile = DEPLOY / "Containerfile"
    done = _tool("hadolint", containerfile)
    assert done.returncode == 0, done.stdout + done.stderr
    broken = _broken_copy(
        tmp_path, containerfile, "FROM python:3.11-slim-bookworm", "FROM python:latest"
    )
    assert _tool("hadolint", broken).returncode != 0


def test_the_containerfile_pins_the_lock_file_and_runs_the_grader_unprivileged():
    text = (DEPLOY / "Containerfile").read_text()
    assert "-c requirements/constraints.txt" in text
    assert 'ENTRYPOINT ["python", "-m", "course_helpers", "grade"]' in text
    assert "USER 1000" in text


@pytest.mark.parametrize("script", SBATCH, ids=lambda p: p.name)
def test_the_slurm_scripts_pass_shellcheck_and_use_only_real_sbatch_options(script):
    done = _tool("shellcheck", script)
    assert done.returncode == 0, done.stdout
    known = {
        line.strip()
        for line in (Path(__file__).parent / "schemas" / "sbatch-options.txt").read_text().split()
        if line.strip() and not line.startswith("#")
    }
    used = re.findall(r"(?m)^#SBATCH --([a-z-]+)", script.read_text())
    assert used and set(used) <= known, set(used) - known


def test_the_slurm_array_runs_and_its_merge_equals_one_run(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    for name, fixture in (("ana", "correct"), ("ben", "tampering")):
        shutil.copy(FIXTURES / f"{fixture}.ipynb", subs / f"{name}.ipynb")
    base = dict(
        os.environ,
        SUBMISSIONS=str(subs),
        RESULTS=str(tmp_path / "results"),
        COURSE_PYTHON=sys.executable,
        SLURM_ARRAY_TASK_COUNT="2",
        SLURM_CPUS_PER_TASK="2",
    )
    for task in ("1", "2"):  # what sbatch --array=1-2 runs, one task after the other here
        env = dict(base, SLURM_ARRAY_TASK_ID=task)
        done = subprocess.run(
            ["bash", str(DEPLOY / "slurm" / "grade-array.sbatch")],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr  # exit 1 of the grader is a verdict
    done = subprocess.run(
        ["bash", str(DEPLOY / "slurm" / "grade-merge.sbatch")],
        env=base,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    merged = json.loads((tmp_path / "results" / "class.json").read_text())
    scores = {nb["key"]: nb["score"] for nb in merged["notebooks"]}
    assert scores == {"subs/ana.ipynb": 2, "subs/ben.ipynb": 0}
    assert (tmp_path / "results" / "gradebook.csv").read_text().startswith("notebook,")


def test_the_learner_workflows_grade_step_passes_a_finished_notebook(tmp_path):
    """The "Grade" step of autograde-learner.yml, run here as written, on a learner's
    repository whose lesson-01 exercises are all answered."""
    workflow = yaml.safe_load((DEPLOY / "github" / "autograde-learner.yml").read_text())
    step = next(s for s in workflow["jobs"]["grade"]["steps"] if s.get("name") == "Grade")
    exercises = tmp_path / "work" / "exercises"
    exercises.mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "01_tensors.ipynb", exercises / "01_tensors.ipynb")
    summary = tmp_path / "summary.md"
    env = dict(
        os.environ, PATH=f"{BIN}{os.pathsep}{os.environ['PATH']}", GITHUB_STEP_SUMMARY=str(summary)
    )
    done = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", step["run"]],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads((tmp_path / "result.json").read_text())
    (notebook,) = result["notebooks"]
    assert notebook["max_score"] > 5 and notebook["score"] == notebook["max_score"]
    assert "01_tensors.ipynb" in summary.read_text()


def test_a_grader_wide_failure_fails_the_array_task(tmp_path):
    # issue 37, item 10: when every worker died the same way (here nbclient cannot be
    # imported where the worker runs), the run exited 1, "some exercise did not pass", and
    # the array task succeeded, so the afterok merge ran on a class of zeros
    broken = tmp_path / "broken" / "nbclient"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('nbclient is broken here')\n")
    subs = tmp_path / "subs"
    subs.mkdir()
    shutil.copy(FIXTURES / "correct.ipynb", subs / "ana.ipynb")
    env = dict(
        os.environ,
        SUBMISSIONS=str(subs),
        RESULTS=str(tmp_path / "results"),
        COURSE_PYTHON=sys.executable,
        PYTHONPATH=os.pathsep.join([str(broken.parent), *sys.path[1:]]),
        SLURM_ARRAY_TASK_COUNT="1",
        SLURM_ARRAY_TASK_ID="1",
    )
    done = subprocess.run(
        ["bash", str(DEPLOY / "slurm" / "grade-array.sbatch")],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "GRADER FAILURE" in done.stderr and "nbclient is broken here" in done.stderr


def test_the_slurm_lane_script_passes_shellcheck_and_runs_in_ci():
    # issue 37: the lane starts a real one-node cluster (deploy/slurm/ci-lane.sh); CI runs it
    lane = DEPLOY / "slurm" / "ci-lane.sh"
    done = _tool("shellcheck", lane)
    assert done.returncode == 0, done.stdout
    assert os.access(lane, os.X_OK)
    # CI runs it through `make test-slurm` (so tests/testing/test_ci_script.py can stand in)
    assert "deploy/slurm/ci-lane.sh" in (ROOT / "Makefile").read_text()
    assert any(call.startswith("make test-slurm") for call in make_calls())
