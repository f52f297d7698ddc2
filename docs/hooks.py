"""The docs site's generated pages, built from the code each time the site is built.

``mkdocs.yml`` names this file under ``hooks:``; ``on_files`` adds three pages that are never
written by hand, so they cannot drift from what they describe:

- ``reference/http-api.md``: every operation of the OpenAPI document the app serves at
  ``/schema/openapi.json`` (``server.app.create_app``), with its parameters, body and answers;
- ``reference/cli.md``: every command of ``sgam`` (the typer app ``server.cli.app``), walked as
  click sees it, with its usage, arguments and options;
- ``reference/settings.md``: every field of the settings models (``server.settings.Settings``
  for the server and its commands, ``server.mcp.cli.McpSettings`` for ``sgam mcp``) with its
  environment variables, default, bounds and description.

``on_page_markdown`` fills one section of a written page the same way: on
``evaluation/benchmarks.md``, the line ``BENCH_TARGETS_MARKER`` becomes the targets of the last
``sgam bench`` run, evaluated from ``evals/results/bench.json`` (``evals.bench.tables``); on
``operations/scaling.md``, the line ``CITUS_MARKER`` becomes the cases of the last
``sgam bench --compare-single-node`` run on a Citus cluster, from ``evals/results/citus.json``
(``evals.bench.citus``).

The functions also serve ``tests/docs/test_docs.py``, which checks each page covers everything.
Building the app needs no database: the OpenAPI document is built from the route handlers.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import typer
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files
from mkdocs.structure.pages import Page
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings

HTTP_API_PAGE: Final = "reference/http-api.md"
CLI_PAGE: Final = "reference/cli.md"
SETTINGS_PAGE: Final = "reference/settings.md"
METHODS: Final = ("get", "put", "post", "patch", "delete")


# -- the HTTP API, from the OpenAPI document ---------------------------------------------------


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document exactly as ``GET /schema/openapi.json`` serves it."""
    from server.app import create_app  # noqa: PLC0415 (the app is built only when asked for)
    from server.settings import Settings  # noqa: PLC0415

    document: dict[str, Any] = create_app(Settings()).openapi_schema.to_schema()
    return document


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """Each operation of the document as (METHOD, path, operation), in document order."""
    for path, item in document["paths"].items():
        for method in METHODS:
            if method in item:
                yield method.upper(), path, item[method]


def _cell(text: Any) -> str:
    """Text for one table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _schema_type(schema: dict[str, Any]) -> str:
    """A schema in a few words: a component's name links to it."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return f"[{name}](#{name.lower()})"
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return " or ".join(_schema_type(option) for option in schema[key])
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(f"`{json.dumps(value)}`" for value in schema["enum"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array":
        return f"array of {_schema_type(schema.get('items', {}))}"
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return f"object of {_schema_type(schema['additionalProperties'])}"
    if "format" in schema:
        return f"{kind} ({schema['format']})"
    return str(kind)


def _rules(schema: dict[str, Any]) -> str:
    """The bounds a schema states, in words."""
    words = []
    for key, word in (
        ("minimum", "at least"),
        ("maximum", "at most"),
        ("exclusiveMinimum", "more than"),
        ("exclusiveMaximum", "less than"),
        ("minLength", "length at least"),
        ("maxLength", "length at most"),
        ("minItems", "items at least"),
        ("maxItems", "items at most"),
    ):
        if key in schema:
            words.append(f"{word} {schema[key]}")
    if "pattern" in schema:
        words.append(f"pattern `{schema['pattern']}`")
    if "default" in schema:
        words.append(f"default `{json.dumps(schema['default'])}`")
    return "; ".join(words)


def _properties_table(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    if not properties:
        return []
    required = set(schema.get("required", []))
    lines = ["| field | type | required | rules | description |", "| --- | --- | --- | --- | --- |"]
    for name, prop in properties.items():
        lines.append(
            f"| `{name}` | {_cell(_schema_type(prop))} | {'yes' if name in required else ''} "
            f"| {_cell(_rules(prop))} | {_cell(prop.get('description', ''))} |"
        )
    return [*lines, ""]


def _operation(method: str, path: str, operation: dict[str, Any]) -> list[str]:
    lines = [f"### `{method} {path}`", ""]
    if operation.get("summary"):
        lines += [f"**{operation['summary']}**", ""]
    if operation.get("description"):
        lines += [operation["description"].strip(), ""]
    security = operation.get("security")
    if security is not None:
        schemes = sorted({name for requirement in security for name in requirement})
        lines += [f"Credential: {', '.join(schemes) or 'none'}.", ""]
    parameters = operation.get("parameters", [])
    if parameters:
        lines += [
            "| parameter | in | type | required | description |",
            "| --- | --- | --- | --- | --- |",
        ]
        for parameter in parameters:
            schema = parameter.get("schema", {})
            rules = _rules(schema)
            description = parameter.get("description", "")
            lines.append(
                f"| `{parameter['name']}` | {parameter['in']} | {_cell(_schema_type(schema))} "
                f"| {'yes' if parameter.get('required') else ''} "
                f"| {_cell('; '.join(part for part in (description, rules) if part))} |"
            )
        lines.append("")
    body = operation.get("requestBody")
    if body is not None:
        for media_type, content in body.get("content", {}).items():
            lines += [f"Body (`{media_type}`): {_schema_type(content.get('schema', {}))}", ""]
    lines += ["| answer | description | body |", "| --- | --- | --- |"]
    for status, response in operation.get("responses", {}).items():
        bodies = [
            _schema_type(content.get("schema", {}))
            for content in response.get("content", {}).values()
        ]
        lines.append(
            f"| {status} | {_cell(response.get('description', ''))} | {_cell(', '.join(bodies))} |"
        )
    return [*lines, ""]


def http_api_page(document: dict[str, Any] | None = None) -> str:
    """The HTTP API reference: every operation, then every component schema."""
    document = openapi_document() if document is None else document
    info = document["info"]
    lines = [
        "# HTTP API reference",
        "",
        (
            f"Generated from the OpenAPI {document['openapi']} document of {info['title']}"
            f" {info['version']}, the one the server serves at `/schema/openapi.json`. The"
            " conventions every call shares (credentials, errors, request ids, the clock) are in"
            " [HTTP conventions](http.md); the module that owns each route is in"
            " [Routes and their packages](routes.md)."
        ),
        "",
    ]
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for method, path, operation in operations(document):
        tag = (operation.get("tags") or [path.split("/")[2] if path.startswith("/v1/") else ""])[0]
        by_tag.setdefault(tag or "service", []).append((method, path, operation))
    for tag, entries in by_tag.items():
        lines += [f"## {tag}", ""]
        for method, path, operation in entries:
            lines += _operation(method, path, operation)
    lines += ["## Schemas", ""]
    for name, schema in sorted(document.get("components", {}).get("schemas", {}).items()):
        lines += [f"### {name} {{#{name.lower()}}}", ""]
        if schema.get("description"):
            lines += [_cell(schema["description"]), ""]
        table = _properties_table(schema)
        lines += table or [f"Type: {_cell(_schema_type(schema))}.", ""]
    return "\n".join(lines)


# -- the command line, from the typer app ------------------------------------------------------
# typer builds its commands on a click of its own (``typer._click``), so the tree is walked by
# what every command and parameter has, not by click's classes.


def cli_command() -> Any:
    """``sgam`` as typer builds it: a group of commands, some of them groups."""
    from server.cli import app  # noqa: PLC0415

    return typer.main.get_command(app)


def subcommands(command: Any) -> dict[str, Any]:
    """A group's commands by name; none for a leaf command."""
    found: dict[str, Any] = getattr(command, "commands", None) or {}
    return found


def walk_commands(command: Any, path: tuple[str, ...] = ("sgam",)) -> Iterator[tuple[str, Any]]:
    """Every command of the tree with its full name (``sgam tenant create``), root first."""
    yield " ".join(path), command
    for name, sub in sorted(subcommands(command).items()):
        yield from walk_commands(sub, (*path, name))


def parameter_names(parameter: Any) -> list[str]:
    """How a parameter is written: an option's flags, an argument's name in capitals."""
    if parameter.param_type_name == "option":
        return [*parameter.opts, *parameter.secondary_opts]
    return [str(parameter.name).upper()]


def _type_name(annotation: Any) -> str:
    """A type as a reader writes it: ``int``, ``Path``, ``list[str] | None``."""
    if isinstance(annotation, type) and not getattr(annotation, "__args__", None):
        return annotation.__name__
    return re.sub(r"\b(?:typing|pathlib|collections\.abc|pydantic\.types)\.", "", str(annotation))


def _default(parameter: Any) -> str:
    default = parameter.default
    if default is None or callable(default) or parameter.required:
        return ""
    if isinstance(default, (list, tuple)) and not default:
        return ""
    return f"`{default}`"


def _usage(name: str, command: Any) -> str:
    words = [name]
    parameters = list(getattr(command, "params", []))
    if any(parameter.param_type_name == "option" for parameter in parameters):
        words.append("[OPTIONS]")
    for parameter in parameters:
        if parameter.param_type_name == "argument":
            word = str(parameter.name).upper() + ("..." if parameter.nargs == -1 else "")
            words.append(word if parameter.required else f"[{word}]")
    if subcommands(command):
        words.append("COMMAND [ARGS]...")
    return " ".join(words)


def _command(name: str, command: Any) -> list[str]:
    lines = [f"## `{name}`", ""]
    if command.help:
        lines += [inspect.cleandoc(command.help), ""]
    lines += ["```text", _usage(name, command), "```", ""]
    parameters = list(getattr(command, "params", []))
    if parameters:
        lines += ["| argument or option | type | default | help |", "| --- | --- | --- | --- |"]
        for parameter in parameters:
            names = " / ".join(f"`{flag}`" for flag in parameter_names(parameter))
            required = " (required)" if parameter.required else ""
            kind = _type_name(parameter.type_descriptor.annotation)
            lines.append(
                f"| {names}{required} | {_cell(kind)} | {_cell(_default(parameter))} "
                f"| {_cell(parameter.help or '')} |"
            )
        lines.append("")
    children = subcommands(command)
    if children:
        listed = ", ".join(
            f"[`{name} {child}`](#{_slug(f'{name} {child}')})" for child in sorted(children)
        )
        lines += [f"Commands: {listed}.", ""]
    return lines


def _slug(name: str) -> str:
    return name.replace(" ", "-")


def cli_page(root: Any = None) -> str:
    """The command-line reference: every command of ``sgam``, as ``--help`` shows it."""
    root = cli_command() if root is None else root
    lines = [
        "# Command-line reference",
        "",
        (
            "Generated from the `sgam` command tree (`server/cli.py`). Every command also answers"
            " `--help`. Options that read an environment variable say so; all settings are in the"
            " [settings reference](settings.md)."
        ),
        "",
    ]
    for name, command in walk_commands(root):
        lines += _command(name, command)
    return "\n".join(lines)


# -- the settings, from the settings models ----------------------------------------------------


def settings_models() -> list[type[BaseSettings]]:
    """The settings models: the server's, then ``sgam mcp``'s."""
    from server.mcp.cli import McpSettings  # noqa: PLC0415
    from server.settings import Settings  # noqa: PLC0415

    return [Settings, McpSettings]


def environment_names(model: type[BaseSettings], name: str, field: FieldInfo) -> list[str]:
    """The environment variables that set one field: its aliases, else prefix and name."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    if choices is not None:
        return [str(choice) for choice in choices]
    if isinstance(alias, str):
        return [alias]
    prefix = str(model.model_config.get("env_prefix", ""))
    return [f"{prefix}{name}".upper()]


def _field_default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        factory: Callable[..., Any] = field.default_factory
        summary = (factory.__doc__ or factory.__name__).strip().splitlines()[0]
        return f"computed: {summary}"
    if field.is_required():
        return "required"
    if field.default is None:
        return "unset"
    return f"`{field.default}`"


def _field_bounds(field: FieldInfo) -> str:
    words = []
    for rule in field.metadata:
        for key, word in (
            ("ge", "at least"),
            ("gt", "more than"),
            ("le", "at most"),
            ("lt", "less than"),
            ("min_length", "length at least"),
        ):
            value = getattr(rule, key, None)
            if value is not None:
                words.append(f"{word} {value}")
    return ", ".join(words)


def settings_page(models: list[type[BaseSettings]] | None = None) -> str:
    """The settings reference: each model's fields with their environment variables."""
    models = settings_models() if models is None else models
    lines = [
        "# Settings reference",
        "",
        (
            "Generated from the settings models. Every setting is read from the environment"
            " when a command starts; nothing is read from a file. A value that breaks a bound"
            " is refused at start, naming the setting."
        ),
        "",
    ]
    for model in models:
        lines += [f"## {model.__name__} (`{model.__module__}`)", ""]
        lines += [(model.__doc__ or "").strip(), ""]
        lines += [
            "| setting | environment | type | default | bounds | what it changes |",
            "| --- | --- | --- | --- | --- | --- |",
        ]
        for name, field in model.model_fields.items():
            names = " · ".join(f"`{env}`" for env in environment_names(model, name, field))
            lines.append(
                f"| `{name}` | {names} | {_cell(_type_name(field.annotation))} "
                f"| {_cell(_field_default(field))} | {_cell(_field_bounds(field))} "
                f"| {_cell(field.description or '')} |"
            )
        lines.append("")
    return "\n".join(lines)


# -- the hook ----------------------------------------------------------------------------------

GENERATED: Final[dict[str, Callable[[], str]]] = {
    HTTP_API_PAGE: http_api_page,
    CLI_PAGE: cli_page,
    SETTINGS_PAGE: settings_page,
}


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Add the generated pages to the site."""
    for uri, build in GENERATED.items():
        files.append(File.generated(config, uri, content=build()))
    return files


# -- the benchmark's targets, from its results file --------------------------------------------

BENCH_PAGE: Final = "evaluation/benchmarks.md"
BENCH_RESULTS: Final = Path("evals/results/bench.json")
BENCH_TARGETS_MARKER: Final = "<!-- sgam bench targets -->"


def bench_targets(results_file: Path) -> str:
    """The machine, the targets and every read's scale ratio of a ``sgam bench`` results file."""
    from evals.bench.tables import targets_section  # noqa: PLC0415 (only this page needs it)

    results = json.loads(results_file.read_text(encoding="utf-8"))
    return f"From `{BENCH_RESULTS}`, on " + targets_section(results)


# -- the cluster's figures, from sgam bench --compare-single-node ------------------------------

SCALING_PAGE: Final = "operations/scaling.md"
CITUS_RESULTS: Final = Path("evals/results/citus.json")
CITUS_MARKER: Final = "<!-- sgam bench citus -->"


def citus_figures(results_file: Path) -> str:
    """Where the two runs of a ``citus.json`` ran and each case's ratios, as Markdown."""
    from evals.bench import citus  # noqa: PLC0415 (only this page needs it)

    results = json.loads(results_file.read_text(encoding="utf-8"))
    return "\n\n".join(
        [
            f"From `{CITUS_RESULTS}`, on {citus.about(results)}.",
            citus.ratio_table(results),
            citus.import_line(results),
        ]
    )


def on_page_markdown(markdown: str, page: Page, config: MkDocsConfig, **_: Any) -> str:
    """Fill the benchmark page's targets and the scaling page's figures from the committed
    results."""
    root = Path(config.config_file_path).parent
    if page.file.src_uri == BENCH_PAGE:
        return markdown.replace(BENCH_TARGETS_MARKER, bench_targets(root / BENCH_RESULTS))
    if page.file.src_uri == SCALING_PAGE:
        return markdown.replace(CITUS_MARKER, citus_figures(root / CITUS_RESULTS))
    return markdown
