"""The repository around the chapters: pins, workflows, licences, the contributor's
guide."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.book import ROOT, requirement_pins

IN_CI = os.environ.get("CI") == "true"
WORKFLOWS = ROOT / ".github" / "workflows"
# The pins that differ on purpose between the legs: the newest-JAX leg exists to run jax and
# jaxlib; flax follows (0.12.8, the newest for Python 3.11, fails to import on jax 0.12).
NEWEST_ONLY = {"jax", "jaxlib", "flax"}


def skip_or_fail(reason):
    """Skip on a developer's machine; fail under CI, where the tool must be there."""
    if IN_CI:
        pytest.fail(reason)
    pytest.skip(reason)


def test_shared_pins_agree():
    """requirements-newest.txt repeats only requirements.txt's pins, apart from jax,
    jaxlib and flax."""
    main = requirement_pins("requirements.txt")
    newest = requirement_pins("requirements-newest.txt")
    assert NEWEST_ONLY <= newest.keys()
    for name, version in newest.items():
        if name in NEWEST_ONLY:
            continue
        assert name in main, (
            f"requirements-newest.txt pins {name}, requirements.txt does not"
        )
        assert version == main[name], (
            f"{name}: requirements-newest.txt pins {version}, requirements.txt {main[name]}"
        )


def test_newest_leg_runs_newer_jax():
    main, newest = requirement_pins(), requirement_pins("requirements-newest.txt")
    key = lambda v: tuple(int(part) for part in v.split("."))
    for name in NEWEST_ONLY:
        assert key(newest[name]) > key(main[name]), (
            f"{name}: the newest leg is not newer"
        )


def test_the_pinned_tfp_nightly_still_installs(tmp_path):
    """The registry prunes old nightlies: the pinned one must still be there to
    download."""
    pin = requirement_pins()["tfp-nightly"]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "--dest",
            str(tmp_path),
            f"tfp-nightly=={pin}",
        ],
        capture_output=True,
        check=False,
        text=True,
        timeout=300,
    )
    if done.returncode and re.search(
        r"NewConnectionError|Network is unreachable|Temporary failure in name resolution|"
        r"ConnectTimeout|Max retries exceeded|ProxyError",
        done.stderr,
    ):
        skip_or_fail(
            f"no network to download tfp-nightly=={pin}: {done.stderr.strip()[-300:]}"
        )
    assert done.returncode == 0, (
        f"tfp-nightly=={pin} no longer downloads; pin a newer nightly in both requirements "
        f"files (or a stable release that works on both legs):\n{done.stderr[-2000:]}"
    )
    assert list(tmp_path.glob("tfp_nightly-*.whl"))


def workflow(name):
    return yaml.safe_load((WORKFLOWS / name).read_text())


def triggers(flow):
    return flow.get("on", flow.get(True))  # PyYAML reads the key `on:` as True


def steps(flow):
    return [step for job in flow["jobs"].values() for step in job.get("steps", [])]


def test_workflows_match_githubs_schema():
    """check-jsonschema validates each workflow against GitHub's workflow schema
    (vendored)."""
    checker = Path(sys.executable).with_name("check-jsonschema")
    assert checker.exists(), (
        "check-jsonschema is not installed (requirements.txt pins it)"
    )
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert files, "no workflow files"
    done = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", *map(str, files)],
        capture_output=True,
        check=False,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path):
    """The schema check can fail: a job without `runs-on` is rejected."""
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  test:\n    steps:\n      - run: echo hi\n")
    checker = Path(sys.executable).with_name("check-jsonschema")
    done = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True,
        check=False,
        text=True,
    )
    assert done.returncode != 0, done.stdout


def job_running(flow, command):
    """The one job of `flow` with a step that runs `command`."""
    (job,) = [
        job
        for job in flow["jobs"].values()
        if any(s.get("run", "").strip() == command for s in job.get("steps", []))
    ]
    return job


def python_version(job):
    (step,) = [
        s for s in job["steps"] if s.get("uses", "").startswith("actions/setup-python@")
    ]
    return str(step["with"]["python-version"]).strip()


def test_ci_script_runs_make_test_by_default():
    """`.ci/run` alone is everything CI runs (`make -k test`); the workflow's jobs pass
    it one target each."""
    text = (ROOT / ".ci" / "run").read_text()
    assert 'targets=("${@:-test}")' in text and 'make -k "${targets[@]}"' in text


def test_test_workflow_runs_checks_and_both_legs_side_by_side():
    """On push and pull request: `make check` as its own fast job, the main leg (Python
    3.11) and the newest-JAX leg (Python 3.12) as parallel jobs, each through .ci/run."""
    flow = workflow("test.yml")
    assert {"push", "pull_request"} <= set(triggers(flow))
    check = job_running(flow, ".ci/run check")
    main = job_running(flow, ".ci/run test-main")
    newest = job_running(flow, ".ci/run test-newest")
    assert python_version(check) == python_version(main) == "3.11"
    assert python_version(newest) == "3.12"
    assert not any("needs" in job for job in (check, main, newest)), "in parallel"


def test_test_workflow_uploads_the_built_site():
    """A reviewer downloads the built site (and the screenshots) from the main job's run,
    even when a test failed."""
    main = job_running(workflow("test.yml"), ".ci/run test-main")
    (upload,) = [
        s
        for s in main["steps"]
        if s.get("uses", "").startswith("actions/upload-artifact@")
    ]
    assert upload.get("if") == "always()"
    assert "_build/html" in upload["with"]["path"].split()


def test_test_workflow_names_a_browser_the_runner_has():
    """On GitHub's Ubuntu runners the browser test drives the image's Google Chrome
    (BOOK_BROWSER), not apt's chromium, which is a snap wrapper there."""
    from tests.site import BROWSERS

    main = job_running(workflow("test.yml"), ".ci/run test-main")
    (step,) = [
        s for s in main["steps"] if s.get("run", "").strip() == ".ci/run test-main"
    ]
    assert step.get("env", {}).get("BOOK_BROWSER") in BROWSERS


def test_publish_workflow_deploys_the_site_from_main():
    flow = workflow("publish.yml")
    assert triggers(flow)["push"]["branches"] == ["main"]
    assert (
        flow["permissions"]["pages"] == "write"
        and flow["permissions"]["id-token"] == "write"
    )
    uses = {s.get("uses", "").split("@")[0]: s for s in steps(flow)}
    assert any(s.get("run", "").strip() == "make book" for s in steps(flow))
    assert uses["actions/upload-pages-artifact"]["with"]["path"] == "_build/html"
    assert "actions/deploy-pages" in uses


def test_newest_jax_workflow_runs_weekly():
    flow = workflow("newest-jax.yml")
    on = triggers(flow)
    assert "workflow_dispatch" in on
    (cron,) = [entry["cron"] for entry in on["schedule"]]
    assert cron.split()[2:4] == ["*", "*"] and cron.split()[4] != "*", (
        f"not weekly: {cron}"
    )
    assert any(s.get("run", "").strip() == "make test-newest" for s in steps(flow))


def test_licences_and_guide_are_in_the_repository():
    assert "Apache License" in (ROOT / "LICENSE").read_text()
    assert "Attribution 4.0 International" in (ROOT / "LICENSE-text").read_text()
    readme = (ROOT / "README.md").read_text()
    for name in (
        "CONTRIBUTING.md",
        "LICENSE",
        "LICENSE-text",
        "chapters/data/oaks/README.md",
    ):
        assert f"]({name})" in readme, f"README.md does not link {name}"


def test_readme_is_a_landing_page():
    """The README says what the book is and gives the two commands; the rest is in
    CONTRIBUTING.md."""
    readme = (ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 50
    assert "make book" in readme and "make test" in readme


@pytest.mark.parametrize("name", ["README.md", "CONTRIBUTING.md"])
def test_docs_link_nothing_outside_the_repository(name):
    text = re.sub(r"```.*?```", "", (ROOT / name).read_text(), flags=re.DOTALL)
    text = re.sub(r"`[^`]*`", "", text)  # code spans show examples, not links
    for target in re.findall(r"\]\(([^)#]+)", text):
        if re.match(r"[a-z]+://", target):
            continue
        assert ".." not in Path(target).parts, (
            f"{name} links {target}, outside the repository"
        )
        assert (ROOT / target).exists(), f"{name} links {target}, which does not exist"
