"""ajpcore.a2a's field table is exactly the one a2a.proto (A2A v1.0.1, tests/vectors/a2a/) declares."""

import a2a_proto

from ajpcore.a2a._fields import FIELDS, STRUCT


def test_field_table_is_the_proto_file():
    assert FIELDS == {name: fields for name, fields in a2a_proto.card_messages().items() if name != STRUCT}


def test_the_reader_sees_the_annotations_that_matter():
    messages = a2a_proto.card_messages()
    card = messages["AgentCard"]
    assert card["name"] == ("required:implicit", "string")
    assert card["skills"] == ("required:repeated", "AgentSkill")
    assert card["documentationUrl"] == ("optional", "string")
    assert card["securitySchemes"] == ("map", "SecurityScheme")
    assert card["provider"] == ("message", "AgentProvider")
    assert messages["AgentCapabilities"]["streaming"] == ("optional", "bool")
    assert messages["AgentExtension"]["params"] == ("message", STRUCT)
    assert messages["OAuthFlows"]["authorizationCode"] == ("oneof", "AuthorizationCodeOAuthFlow")
    assert messages["AuthorizationCodeOAuthFlow"]["scopes"] == ("required:map", "string")
    assert len(messages) == 21


def test_json_names_follow_protoc():
    assert a2a_proto.json_name("oauth2_metadata_url") == "oauth2MetadataUrl"
    assert a2a_proto.json_name("open_id_connect_security_scheme") == "openIdConnectSecurityScheme"
