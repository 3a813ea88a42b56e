"""examples/ci/ is something teams copy as is: valid YAML of the right shape, with every `ingest`
command and option in it existing in the CLI (introspected from the typer app, as `--help` shows)."""

from __future__ import annotations

import shlex
from pathlib import Path

import typer.main
import yaml

from ingest.cli import app

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "ci"
def github_scripts(doc: dict) -> list[str]:
    return [step["run"] for job in doc["jobs"].values() for step in job["steps"] if "run" in step]


def gitlab_scripts(doc: dict) -> list[str]:
    scripts = []
    for name, job in doc.items():
        if isinstance(job, dict):
            for key in ("before_script", "script", "after_script"):
                scripts.extend(job.get(key, []))
    return scripts


def ingest_commands(scripts: list[str]) -> list[list[str]]:
    """Every `ingest …` command line in the shell scripts, as words."""
    commands = []
    for script in scripts:
        for line in script.replace("\\\n", " ").splitlines():
            line = line.strip()
            if line.startswith("ingest "):
                commands.append(shlex.split(line))
    return commands


def examples() -> dict[str, list[list[str]]]:
    github = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    gitlab = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))
    return {"github-actions.yml": ingest_commands(github_scripts(github)),
            "gitlab-ci.yml": ingest_commands(gitlab_scripts(gitlab))}


def cli_options() -> dict[str, set[str]]:
    group = typer.main.get_command(app)
    return {name: {opt for param in command.params for opt in (*param.opts, *param.secondary_opts) if opt.startswith("-")}
            for name, command in group.commands.items()}


def used_options() -> set[tuple[str, str]]:
    return {(words[1], word.split("=")[0]) for commands in examples().values() for words in commands
            for word in words[2:] if word.startswith("-")}


def test_github_actions_example_is_a_workflow_with_an_elasticsearch_service_and_junit_reports():
    doc = yaml.safe_load((EXAMPLES / "github-actions.yml").read_text(encoding="utf-8"))
    assert set(doc) >= {"name", True, "jobs"}  # YAML 1.1 reads the key `on` as True
    check = doc["jobs"]["check"]
    assert check["services"]["elasticsearch"]["image"].startswith("docker.elastic.co/elasticsearch/elasticsearch:9.")
    uses = [step.get("uses", "") for job in doc["jobs"].values() for step in job["steps"]]
    assert any(u.startswith("mikepenz/action-junit-report@") for u in uses)
    publish = doc["jobs"]["publish"]
    assert publish["env"]["ES_API_KEY"] == "${{ secrets.ES_API_KEY }}"
    assert publish["env"]["INGEST_STORE"] == "${{ secrets.INGEST_STORE }}"


def test_gitlab_example_has_an_elasticsearch_service_and_junit_reports():
    doc = yaml.safe_load((EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8"))
    assert doc[".ingest"]["artifacts"]["reports"]["junit"] == "reports/*.xml"
    assert doc[".ingest"]["artifacts"]["when"] == "always"
    [service] = doc["check-documents"]["services"]
    assert service["name"].startswith("docker.elastic.co/elasticsearch/elasticsearch:9.")
    # Credentials are CI/CD variables, never written in the file.
    text = (EXAMPLES / "gitlab-ci.yml").read_text(encoding="utf-8")
    assert "ES_API_KEY:" not in text and "ES_PASSWORD" not in text


def test_examples_run_validate_run_and_eval_with_gates_and_reports():
    for name, commands in examples().items():
        by_command = {words[1]: words for words in commands}
        assert {"validate", "run", "eval"} <= set(by_command), name
        for command in ("validate", "run", "eval"):
            assert "--junit" in by_command[command], (name, command)
        assert {"--min-hit-at-k", "--max-leaks"} <= set(by_command["eval"]), name
        assert by_command["eval"][by_command["eval"].index("--max-leaks") + 1] == "0", name


def test_examples_name_only_existing_commands_and_options():
    options = cli_options()
    for name, commands in examples().items():
        for words in commands:
            assert words[1] in options, f"{name}: `ingest {words[1]}` is not a command"
    unknown = {(command, option) for command, option in used_options()
               if option not in options[command]}
    assert not unknown, f"options the CLI does not have: {sorted(unknown)}"

