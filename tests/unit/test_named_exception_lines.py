"""A logger's record that names the class of the exception whose traceback follows: when the log is
cut before the traceback's own exception line, that class decides (real lines, with sources)."""

from __future__ import annotations

from recovery.activities.signatures.structure import exception_fact
from tests.unit.real_lines import diagnose

# https://github.com/kubeflow/trainer/issues/2041 (the dev corpus's excerpt): a PyTorchJob elastic
# worker's rendezvous shutdown fails; the thread's log stops at the traceback header.
RECORD = (
    "WARNING:torch.distributed.elastic.rendezvous.dynamic_rendezvous:The node"
    " 'elastic-example-imagenet-worker-1_17_0' has failed to shutdown the rendezvous 'none' due to an error of"
    " type RendezvousConnectionError."
)


def judged(text: str) -> tuple[str, bool | None, str]:
    found = diagnose(text)
    return found.category, found.retryable, found.explanation


def test_the_class_the_record_named_decides_a_cut_traceback() -> None:
    category, retryable, explanation = judged(
        "INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group\n\n\n"
        + RECORD
        + "\nTraceback (most recent call last):"
    )
    assert (category, retryable) == ("network", True)
    assert "RendezvousConnectionError" in explanation


def test_a_record_far_from_the_traceback_names_nothing() -> None:
    # the same excerpt's agent line, repeated: the record no longer introduces the traceback
    filler = "\n".join(["INFO:torch.distributed.elastic.agent.server.api:[default] Rendezvous'ing worker group"] * 5)
    category, _, explanation = judged(RECORD + "\n" + filler + "\nTraceback (most recent call last):")
    assert "RendezvousConnectionError" not in explanation
    assert category == "unknown"


def test_the_further_words_of_real_class_names() -> None:
    # fsspec/s3fs#597: botocore's HTTPClientError (an HTTP client failure talking to S3)
    http = exception_fact("botocore.exceptions.HTTPClientError")
    assert http is not None and (http.category, http.retryable) == ("network", True)
    # google-api-core's status classes are named for the status (absl's DEADLINE_EXCEEDED)
    deadline = exception_fact("google.api_core.exceptions.DeadlineExceeded")
    assert deadline is not None and (deadline.category, deadline.retryable) == ("unknown", True)


def test_standard_library_classes_named_without_an_error_word() -> None:
    # NVIDIA/earth2studio#217: a model package that is not the zip archive it should be
    category, retryable, explanation = judged(
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3.11/zipfile.py", line 1369, in _RealGetContents\n'
        '    raise BadZipFile("File is not a zip file")\n'
        "zipfile.BadZipFile: File is not a zip file"
    )
    assert (category, retryable) == ("application", False)
    assert "BadZipFile" in explanation


def test_a_qualified_class_the_table_knows_is_read_without_an_error_word() -> None:
    # maxpumperla/elephas#167: the parameter server's own host name did not resolve (macOS)
    category, retryable, explanation = judged(
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.7/site-packages/elephas/utils/sockets.py", line 21, in determine_master\n'
        '    return gethostbyname(gethostname()) + ":" + str(port)\n'
        "socket.gaierror: [Errno 8] nodename nor servname provided, or not known"
    )
    assert (category, retryable) == ("network", True)
    assert "socket.gaierror" in explanation
