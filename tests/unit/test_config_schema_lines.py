"""Whole excerpts of real logs where a job's configuration failed JSON Schema validation, in the
words python-jsonschema gives its errors, printed without the ValidationError class (SageMaker's
built-in algorithms log the message at ERROR and repeat it in the job's AlgorithmError failure
reason); and output about schemas that is no failure (a schema printed as data, the errors a
program collects and prints in a loop), which must stay healthy."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable, signature of the first evidence line)
FAILURES = [
    # Amazon SageMaker's guide to its built-in algorithms' logs: a misspelt hyperparameter, as the
    # algorithm's CloudWatch log shows it (the message wrapped over three lines).
    (
        "https://docs.amazonaws.cn/sagemaker/latest/dg/common-info-all-sagemaker-models-logs.md",
        "[10/16/2017 23:45:17 ERROR 139623806805824 train.py:48]\n"
        "Additional properties are not allowed (u'mini_batch_siz' was\n"
        "unexpected)",
        "application",
        False,
        "config-schema-invalid",
    ),
    # The same page: an invalid hyperparameter value, as the job's FailureReason reports it.
    (
        "https://docs.amazonaws.cn/sagemaker/latest/dg/common-info-all-sagemaker-models-logs.md",
        "AlgorithmError: u'abc' is not valid under any of the given\n"
        "schemas\\n\\nFailed validating u'oneOf' in\n"
        "schema[u'properties'][u'feature_dim']:\\n    {u'oneOf':",
        "application",
        False,
        "config-schema-invalid",
    ),
    # python-jsonschema's own documentation (docs/referencing.rst): the traceback of a failed
    # validate() call, its class named; the class already says it, the message agrees.
    (
        "https://github.com/python-jsonschema/jsonschema/blob/main/docs/referencing.rst",
        "Traceback (most recent call last):\n"
        "    ...\n"
        "jsonschema.exceptions.ValidationError: 12 is not of type 'string'\n"
        "\n"
        "Failed validating 'type' in schema['properties']['project']['properties']['name']:\n"
        "    {'pattern': '^([a-zA-Z\\\\d]|[a-zA-Z\\\\d][\\\\w.-]*[a-zA-Z\\\\d])$',\n"
        "    'title': 'Project name',\n"
        "    'type': 'string'}",
        "application",
        False,
        None,
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable", "signature"), FAILURES)
def test_schema_failures(source: str, text: str, category: str, retryable: bool, signature: str | None) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.category, found.retryable) == (category, retryable), source
    if signature is not None:
        assert found.evidence[0].signature == signature, source


HEALTHY = [
    # python-jsonschema docs/referencing.rst: a schema printed as data.
    '    {\n        "type": "object",\n        "additionalProperties": {"$ref": "urn:nonneg-integer-schema"},\n    }',
    # python-jsonschema docs/errors.rst: a program walks an error's context and prints each
    # suberror; it caught them and goes on.
    "[0, 'type'], {} is not of type 'string'\n"
    "[1, 'type'], {} is not of type 'integer'\n"
    "[0, 'type'], 3 is not of type 'string'\n"
    "[1, 'minimum'], 3 is less than the minimum of 5",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_schema_output_stays_healthy(text: str) -> None:
    assert diagnose(text).symptom == "none"
