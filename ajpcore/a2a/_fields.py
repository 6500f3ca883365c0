"""The Agent Card's field table, read off ``a2a.proto`` (A2A v1.0.1, commit 3303592, Apache-2.0).

For every message reachable from ``AgentCard``: each field's ProtoJSON name
(lowerCamelCase, as protoc derives it) with its presence kind and proto type.
Kinds: ``implicit`` (a proto3 scalar without ``optional``: its default value is
not serialized), ``optional`` (explicit presence), ``repeated``, ``map`` (the type
is the value type), ``message`` (a singular message: explicit presence),
``oneof`` (a member of a ``oneof``: explicit presence); ``required:<kind>`` marks
``[(google.api.field_behavior) = REQUIRED]``.  ``tests/a2a/test_proto_fields.py`` holds
this table to the proto file, so it cannot drift from what it claims to copy.
"""

from __future__ import annotations

from typing import Dict, Tuple

__all__ = ["FIELDS", "STRUCT"]

STRUCT = "google.protobuf.Struct"
"""A free JSON object (``AgentExtension.params``, ``AgentCardSignature.header``): no fields of its own."""

FIELDS: Dict[str, Dict[str, Tuple[str, str]]] = {
    "APIKeySecurityScheme": {
        "description": ("implicit", "string"),
        "location": ("required:implicit", "string"),
        "name": ("required:implicit", "string"),
    },
    "AgentCapabilities": {
        "streaming": ("optional", "bool"),
        "pushNotifications": ("optional", "bool"),
        "extensions": ("repeated", "AgentExtension"),
        "extendedAgentCard": ("optional", "bool"),
    },
    "AgentCard": {
        "name": ("required:implicit", "string"),
        "description": ("required:implicit", "string"),
        "supportedInterfaces": ("required:repeated", "AgentInterface"),
        "provider": ("message", "AgentProvider"),
        "version": ("required:implicit", "string"),
        "documentationUrl": ("optional", "string"),
        "capabilities": ("required:message", "AgentCapabilities"),
        "securitySchemes": ("map", "SecurityScheme"),
        "securityRequirements": ("repeated", "SecurityRequirement"),
        "defaultInputModes": ("required:repeated", "string"),
        "defaultOutputModes": ("required:repeated", "string"),
        "skills": ("required:repeated", "AgentSkill"),
        "signatures": ("repeated", "AgentCardSignature"),
        "iconUrl": ("optional", "string"),
    },
    "AgentCardSignature": {
        "protected": ("required:implicit", "string"),
        "signature": ("required:implicit", "string"),
        "header": ("message", "google.protobuf.Struct"),
    },
    "AgentExtension": {
        "uri": ("implicit", "string"),
        "description": ("implicit", "string"),
        "required": ("implicit", "bool"),
        "params": ("message", "google.protobuf.Struct"),
    },
    "AgentInterface": {
        "url": ("required:implicit", "string"),
        "protocolBinding": ("required:implicit", "string"),
        "tenant": ("implicit", "string"),
        "protocolVersion": ("required:implicit", "string"),
    },
    "AgentProvider": {
        "url": ("required:implicit", "string"),
        "organization": ("required:implicit", "string"),
    },
    "AgentSkill": {
        "id": ("required:implicit", "string"),
        "name": ("required:implicit", "string"),
        "description": ("required:implicit", "string"),
        "tags": ("required:repeated", "string"),
        "examples": ("repeated", "string"),
        "inputModes": ("repeated", "string"),
        "outputModes": ("repeated", "string"),
        "securityRequirements": ("repeated", "SecurityRequirement"),
    },
    "AuthorizationCodeOAuthFlow": {
        "authorizationUrl": ("required:implicit", "string"),
        "tokenUrl": ("required:implicit", "string"),
        "refreshUrl": ("implicit", "string"),
        "scopes": ("required:map", "string"),
        "pkceRequired": ("implicit", "bool"),
    },
    "ClientCredentialsOAuthFlow": {
        "tokenUrl": ("required:implicit", "string"),
        "refreshUrl": ("implicit", "string"),
        "scopes": ("required:map", "string"),
    },
    "DeviceCodeOAuthFlow": {
        "deviceAuthorizationUrl": ("required:implicit", "string"),
        "tokenUrl": ("required:implicit", "string"),
        "refreshUrl": ("implicit", "string"),
        "scopes": ("required:map", "string"),
    },
    "HTTPAuthSecurityScheme": {
        "description": ("implicit", "string"),
        "scheme": ("required:implicit", "string"),
        "bearerFormat": ("implicit", "string"),
    },
    "ImplicitOAuthFlow": {
        "authorizationUrl": ("implicit", "string"),
        "refreshUrl": ("implicit", "string"),
        "scopes": ("map", "string"),
    },
    "MutualTlsSecurityScheme": {
        "description": ("implicit", "string"),
    },
    "OAuth2SecurityScheme": {
        "description": ("implicit", "string"),
        "flows": ("required:message", "OAuthFlows"),
        "oauth2MetadataUrl": ("implicit", "string"),
    },
    "OAuthFlows": {
        "authorizationCode": ("oneof", "AuthorizationCodeOAuthFlow"),
        "clientCredentials": ("oneof", "ClientCredentialsOAuthFlow"),
        "implicit": ("oneof", "ImplicitOAuthFlow"),
        "password": ("oneof", "PasswordOAuthFlow"),
        "deviceCode": ("oneof", "DeviceCodeOAuthFlow"),
    },
    "OpenIdConnectSecurityScheme": {
        "description": ("implicit", "string"),
        "openIdConnectUrl": ("required:implicit", "string"),
    },
    "PasswordOAuthFlow": {
        "tokenUrl": ("implicit", "string"),
        "refreshUrl": ("implicit", "string"),
        "scopes": ("map", "string"),
    },
    "SecurityRequirement": {
        "schemes": ("map", "StringList"),
    },
    "SecurityScheme": {
        "apiKeySecurityScheme": ("oneof", "APIKeySecurityScheme"),
        "httpAuthSecurityScheme": ("oneof", "HTTPAuthSecurityScheme"),
        "oauth2SecurityScheme": ("oneof", "OAuth2SecurityScheme"),
        "openIdConnectSecurityScheme": ("oneof", "OpenIdConnectSecurityScheme"),
        "mtlsSecurityScheme": ("oneof", "MutualTlsSecurityScheme"),
    },
    "StringList": {
        "list": ("repeated", "string"),
    },
}
