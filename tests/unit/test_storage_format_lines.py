"""Real lines where a dataset or checkpoint store's own file format fails under a training job, and
the text the library puts in its error decides whose fault it is: HDF5's bottom-of-stack
description that h5py puts in parentheses (tables/hdf5.yaml), the errno HDF5's file drivers put in
that text (structure.errno_fact), LMDB's return-code messages (tables/lmdb.yaml) and safetensors'
header errors (catalog: safetensors-header-unreadable); and the status an object store's SDK
quotes (tables/http_status.yaml). Each excerpt names the public thread that printed it; healthy
excerpts that must stay healthy are at the end."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, verdict

H5PY_FRAMES = (
    '  File "h5py/_objects.pyx", line 54, in h5py._objects.with_phil.wrapper\n'
    '  File "h5py/_objects.pyx", line 55, in h5py._objects.with_phil.wrapper\n'
)

FAILED = [
    # open-mpi/ompi#6535: every MPI rank opens the same HDF5 file, rank 0 for writing; HDF5's lock
    # is held by the other opens
    (
        TRACEBACK + '  File "plot_surface.py", line 80, in crunch\n'
        "    f = h5py.File(surf_file, 'r+' if rank == 0 else 'r')\n"
        + H5PY_FRAMES
        + '  File "h5py/h5f.pyx", line 78, in h5py.h5f.open\n'
        "OSError: Unable to open file (unable to lock file, errno = 11, error message = 'Resource temporarily"
        " unavailable')\n"
        "Computing 5100 values for rank 1",
        ("hdf5-lock-held", "application", False),
    ),
    # asingh33/CNNGestureRecognizer#40: Keras loads weights from a file that is not HDF5
    (
        "model.load_weights(fname)\n"
        '  File "C:\\Users\\user\\AppData\\Local\\Programs\\Python\\Python36\\lib\\site-packages\\h5py\\_hl\\files.py",'
        " line 170, in make_fid\n"
        "    fid = h5f.open(name, flags, fapl=fapl)\n"
        '  File "h5py\\h5f.pyx", line 85, in h5py.h5f.open\n'
        "OSError: Unable to open file (file signature not found)",
        ("hdf5-not-hdf5", "application", False),
    ),
    # Farama-Foundation/D4RL#210: the dataset file is shorter than its superblock says
    (
        H5PY_FRAMES + '  File "h5py/h5f.pyx", line 106, in h5py.h5f.open\n'
        "OSError: Unable to open file (truncated file: eof = 5365760, sblock->base_addr = 0, stored_eof = 34720209)",
        ("hdf5-truncated", "application", False),
    ),
    # qqwweee/keras-yolo3#443: the cluster filesystem does not implement locking; HDF5 says so with
    # the errno (ENOSYS), which a rerun on the same filesystem meets again
    (
        TRACEBACK + '  File "h5py/h5f.pyx", line 98, in h5py.h5f.create\n'
        "OSError: Unable to create file (file locking disabled on this file system (use HDF5_USE_FILE_LOCKING"
        " environment variable to override), errno = 38, error message = 'Function not implemented')",
        ("uncaught-exception", "system_software", False),
    ),
    # comfyanonymous/ComfyUI_bitsandbytes_NF4#34: a checkpoint loader prints safetensors' header error
    # without its class; the file is cut short
    (
        "Error occurred when executing CheckpointLoaderNF4:\n\n"
        "Error while deserializing header: MetadataIncompleteBuffer\n\n"
        'File "/mnt/workspace/ComfyUI/comfy/utils.py", line 34, in load_torch_file\n'
        "sd = safetensors.torch.load_file(ckpt, device=device.type)\n"
        'File "/usr/local/lib/python3.10/site-packages/safetensors/torch.py", line 311, in load_file\n'
        'with safe_open(filename, framework="pt", device=device) as f:',
        ("safetensors-header-unreadable", "application", False),
    ),
    # microsoft/azure-vhd-utils#52: Azure Storage's Go SDK quotes the status Azure answered a block
    # upload with (503 ServerBusy: the account throttled it)
    (
        "Effective upload size: 27092.00 MB (from 28612.00 MB originally)\n"
        " {29808918528, 29811015679}: storage: service returned error: StatusCode=503, ErrorCode=ServerBusy,"
        " ErrorMessage=The server is busy.\n"
        "Upload Incomplete: Some blocks of the VHD failed to upload, rerun the command to upload those blocks",
        ("http-status-503", "network", True),
    ),
    # BVLC/caffe#2128: Caffe's convert_imageset fills the LMDB map it opened
    (
        "convert_imageset.cpp:136] Processed 5476000 files.\n"
        "E0314 07:58:45.217167 32177 lmdb_dataset.cpp:118] mdb_put failed MDB_MAP_FULL: Environment mapsize"
        " limit reached\n"
        "F0314 07:58:45.217581 32177 convert_imageset.cpp:131] Check failed: dataset->put(string(key_cstr,"
        " length), datum)\n"
        "*** Check failure stack trace: ***\n"
        "    @     0x7f9d8ae6b42d  google::LogMessage::Fail()\n"
        "./create_imagenet.sh: line 44: 32177 Aborted                 (core dumped) GLOG_logtostderr=1"
        " $TOOLS/convert_imageset --shuffle $TRAIN_DATA_ROOT $DATA/combine_train.txt $EXAMPLE/combine_train_lmdb",
        ("lmdb-map-full", "application", False),
    ),
    # open-mmlab/mmagic#46: py-lmdb's class per code, with the same message
    (
        "Traceback (most recent call last):\n"
        'File "create_lmdb.py", line 120, in general_image_folder\n'
        "txn.put(key_byte, data)\n"
        "lmdb.MapFullError: mdb_put: MDB_MAP_FULL: Environment mapsize limit reached.",
        ("lmdb-map-full", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "expected"), FAILED)
def test_what_the_file_format_says_decides(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


HEALTHY = [
    # BlueBrain/HighFive#326: HDF5 prints its diagnostic stack for lookups the tests expect to fail
    # and catch; the run ends with no errors
    (
        "Running 9 test cases...\n"
        "HDF5-DIAG: Error detected in HDF5 (1.10.0-patch1) thread 140405351144320:\n"
        "  #000: ../../../src/H5L.c line 881 in H5Lexists(): unable to get link info\n"
        "    major: Symbol table\n"
        "    minor: Object not found\n"
        "  #001: ../../../src/H5L.c line 2962 in H5L__exists(): path doesn't exist\n"
        "    major: Symbol table\n"
        "    minor: Object already exists\n"
        "*** No errors detected"
    ),
    # GambitBSM/gambit#51: the same dump for a file the program then creates; not fatal
    (
        "HDF5-DIAG: Error detected in HDF5 (1.8.11) thread 140552757901376:\n"
        "  #000: ../../../src/H5F.c line 1586 in H5Fopen(): unable to open file\n"
        "    major: File accessibilty\n"
        "    minor: Unable to open file\n"
        "  #003: ../../../src/H5FDsec2.c line 343 in H5FD_sec2_open(): unable to open file: name ="
        " 'runs/MSSM20atMGUT_FEFTH//samples//MSSM20atMSUSY.hdf5', errno = 2, error message = 'No such file or"
        " directory', flags = 0, o_flags = 0\n"
        "    major: File accessibilty\n"
        "    minor: Unable to open file "
    ),
    # CMU-Perceptual-Computing-Lab/openpose#1479: a frame of the dump naming HDF5's own finding
    "  #002: ../../src/H5Fsuper.c line 336 in H5F_super_read(): file signature not found",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_lines_stay_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
