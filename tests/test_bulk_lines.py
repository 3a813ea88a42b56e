"""The bulk action lines the store encodes itself are what the client's own expansion sends."""

from __future__ import annotations

import json

import pytest
from elasticsearch.helpers import expand_action
from elasticsearch.serializer import JsonSerializer

from ingest.store.elasticsearch.transport import ActionLine, BulkSerializer, _expanded

ACTIONS = [
    {"_op_type": "index", "_index": "kb-chunks_public_20260101t000000-abcdef", "_id": "ab" * 32, "_source": '{"a":1}'},
    {"_op_type": "index", "_index": "kb-documents_x", "_id": 'odd "id" \\ é ✓\n', "_source": {"title": "é"}},
    {"_op_type": "delete", "_index": "kb-documents_x", "_id": "policy@1.2"},
    # not ours to encode: left to the client's expansion
    {"_op_type": "update", "_index": "i", "_id": "x", "doc": {"a": 1}},
    {"_index": "i", "_id": 7, "_source": {"a": 1}},
    {"_op_type": "index", "_index": "i", "_id": "x", "_routing": "r", "_source": {"a": 1}},
]


@pytest.mark.parametrize("action", ACTIONS)
def test_each_action_line_and_source_are_the_clients(action):
    ours, client = _expanded(dict(action)), expand_action(dict(action))
    sent = BulkSerializer()
    assert json.loads(sent.dumps(ours[0])) == json.loads(JsonSerializer().dumps(client[0]))
    assert ours[0] == client[0]  # the helpers' error paths read the header as a dict
    assert (ours[1] is None) == (client[1] is None)
    if ours[1] is not None:
        assert sent.dumps(ours[1]) == JsonSerializer().dumps(client[1])


def test_a_header_is_a_plain_dict_to_the_default_serializer():
    header, _ = _expanded(ACTIONS[2])
    assert isinstance(header, ActionLine)
    assert json.loads(JsonSerializer().dumps(header)) == {"delete": {"_index": "kb-documents_x", "_id": "policy@1.2"}}
    assert header.copy().popitem() == ("delete", {"_index": "kb-documents_x", "_id": "policy@1.2"})
