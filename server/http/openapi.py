"""Request bodies in the OpenAPI document exactly as pydantic validates them.

Litestar builds a model's schema field by field and drops what sits inside a type: the pattern
of an optional or listed id, the allowed keys of a mapping, a model's refusal of unknown fields.
A body a client sends (a model that forbids extra fields) is described instead by pydantic's
own validation schema, so what the document calls valid is what the server accepts. A property
naming another model or an enum keeps Litestar's reference to its component.
"""

from __future__ import annotations

from dataclasses import fields
from typing import TYPE_CHECKING, Any, Final

from litestar.openapi.spec import Schema
from litestar.plugins.pydantic import PydanticSchemaPlugin

if TYPE_CHECKING:
    from litestar._openapi.schema_generation.schema import SchemaCreator
    from litestar.typing import FieldDefinition

_SUBSCHEMAS: Final = frozenset(
    {"items", "additionalProperties", "propertyNames", "not", "if", "then", "else"}
)
_SUBSCHEMA_LISTS: Final = frozenset({"anyOf", "oneOf", "allOf"})
_RULES: Final = frozenset({"oneOf", "anyOf", "allOf", "if", "then", "else"})
_DROPPED: Final = frozenset({"title"})
"""Pydantic titles each property after its name; the document names properties once."""


def _schema_keys() -> dict[str, str]:
    keys = {}
    for spec_field in fields(Schema):
        alias = spec_field.metadata.get("alias")
        if alias is None:
            head, *rest = spec_field.name.split("_")
            alias = head + "".join(part.title() for part in rest)
        keys[alias] = spec_field.name
    return keys


_SCHEMA_KEYS: Final = _schema_keys()


def to_spec(raw: dict[str, Any]) -> Schema:
    """A JSON Schema (as pydantic writes it) as Litestar's ``Schema``, titles left out."""
    return Schema(
        **{
            _SCHEMA_KEYS[key]: _spec_value(key, value)
            for key, value in raw.items()
            if key not in _DROPPED
        }
    )


def _spec_value(key: str, value: Any) -> Any:
    if key == "properties":
        return {name: to_spec(schema) for name, schema in value.items()}
    if key in _SUBSCHEMAS and isinstance(value, dict):
        return to_spec(value)
    if key in _SUBSCHEMA_LISTS:
        return [to_spec(item) for item in value]
    return value


def _names_a_component(raw: Any) -> bool:
    if isinstance(raw, dict):
        return "$ref" in raw or any(_names_a_component(value) for value in raw.values())
    if isinstance(raw, list):
        return any(_names_a_component(item) for item in raw)
    return False


class ExactBodySchemaPlugin(PydanticSchemaPlugin):
    """Litestar's pydantic schema plugin, with request bodies described by pydantic itself."""

    @classmethod
    def for_pydantic_model(
        cls, field_definition: FieldDefinition, schema_creator: SchemaCreator
    ) -> Schema:
        """The component of a pydantic model; a body's properties and rules as pydantic's."""
        schema = super().for_pydantic_model(field_definition, schema_creator)
        model = field_definition.annotation
        if model.model_config.get("extra") != "forbid":
            return schema
        exact = model.model_json_schema(mode="validation")
        properties = dict(schema.properties or {})
        for name, raw in exact["properties"].items():
            if not _names_a_component(raw):
                properties[name] = to_spec(raw)
        schema.properties = properties
        schema.additional_properties = False
        # Rules across properties ("exactly one of", "enum_values when enum"), as declared.
        for key in _RULES & exact.keys():
            setattr(schema, _SCHEMA_KEYS[key], _spec_value(key, exact[key]))
        return schema
