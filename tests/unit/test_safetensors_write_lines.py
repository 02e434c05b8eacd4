"""Real lines of a safetensors save that failed: its writer raises SafetensorError with the
std::io::Error it met ("Error while serializing: ..."), so the class says only that a safetensors
file could not be written and the OS error in the message says why: a full disk (ENOSPC) or a file
system that refuses the write (ENOTSUP on a FUSE mount) is the storage's, and a rerun meets it
again. Rust prints that error as `No space left on device (os error 28)` (Display, newer releases)
or `IoError(Os { code: 28, kind: StorageFull, ... })` (Debug, older ones). A header safetensors
cannot read stays the program's (a file that is not a safetensors file)."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import diagnose

# (source, excerpt, category, retryable)
CASES = [
    # bghira/SimpleTuner issue 2353: the last checkpoint of a long run did not fit on the disk.
    (
        "https://github.com/bghira/SimpleTuner/issues/2353",
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.12/site-packages/safetensors/torch.py", line 307, in save_file\n'
        "    serialize_file(_flatten(tensors), filename, metadata=metadata)\n"
        "safetensors_rust.SafetensorError: Error while serializing: I/O error: No space left on device (os error 28)",
        "system_software",
        False,
    ),
    # hiyouga/LlamaFactory issue 5155 (its title): an older safetensors prints the Debug form.
    (
        "https://github.com/hiyouga/LlamaFactory/issues/5155",
        "safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: StorageFull,"
        ' message: "No space left on device" })',
        "system_software",
        False,
    ),
    # safetensors/safetensors issue 842: an ms-swift checkpoint saved to a FUSE mount (the thread
    # shows the message wrapped over three lines; this is the line Python prints).
    (
        "https://github.com/safetensors/safetensors/issues/842",
        "safetensors._safetensors_rust.SafetensorError: Error while serializing: I/O error: Operation not supported"
        " (os error 95)",
        "system_software",
        False,
    ),
    # The Debug form with an errno no line signature knows by its words (built from Rust's
    # library/std/src/io/error.rs, `impl fmt::Debug for Repr`): a file past the file system's size
    # limit (EFBIG), which only the number names.
    (
        "Rust std::io::Error Debug form",
        "safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 27, kind: FileTooLarge,"
        ' message: "File too large" })',
        "system_software",
        False,
    ),
    # bmaltais/kohya_ss issue 2466: a Windows error code is no errno; the class's verdict stays.
    (
        "https://github.com/bmaltais/kohya_ss/issues/2466",
        "safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 1224, kind: Uncategorized,"
        ' message: "The requested operation cannot be performed on a file with a user-mapped section open." })',
        "application",
        False,
    ),
    # A file that is not a safetensors file (safetensors' own header error): the program's.
    (
        "safetensors bindings/python/src/lib.rs (Open::new)",
        "safetensors_rust.SafetensorError: Error while deserializing header: HeaderTooLarge",
        "application",
        False,
    ),
]


@pytest.mark.parametrize(("source", "text", "category", "retryable"), CASES)
def test_a_safetensors_error_is_what_its_os_error_says(source: str, text: str, category: str, retryable: bool) -> None:
    found = diagnose(text)
    assert found.symptom == "crash", source
    assert (found.category, found.retryable) == (category, retryable), source
