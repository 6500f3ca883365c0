"""Builds the AJP conformance pack (see ../README.md): one module per pack file, reference answers apart."""
