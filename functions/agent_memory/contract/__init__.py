"""The HTTP contract of v1: the request and response bodies every route takes and answers.

One package shared by the handlers (which validate and answer with it), the Python client and the
agent tools (which send and parse it), and the OpenAPI document generated from it. docs/api.md
states what it leaves open.
"""
