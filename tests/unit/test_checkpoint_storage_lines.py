"""Real lines where checkpoints and the storage under them fail, and where a rerun's chance turns on
what the line says: the code an object store answered (tables/aws_errors.yaml, Google's
google.api_core classes in tables/exceptions.yaml), the status TensorStore puts at the head of
Orbax's errors (tables/tensorstore_status.yaml), an empty pickle on resume, and the zip writer's
end-of-file check that follows any error inside torch.save. Each line names the public thread that
printed it; healthy lines that must stay healthy are at the end."""

from __future__ import annotations

import pytest

from tests.unit.real_lines import TRACEBACK, verdict

FAILED = [
    # ray-project/deltacat#51: S3 throttled a multipart upload; botocore had spent its retries
    (
        "botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the"
        " CompleteMultipartUpload operation",
        ("aws-error-slowdown", "network", True),
    ),
    # ssl-hep/ServiceX#958: a Ceph object store throttled the MinIO client the same way
    (
        '  File "/usr/local/lib/python3.10/site-packages/minio/api.py", line 424, in _url_open\n'
        "    raise response_error\n"
        "minio.error.S3Error: S3 operation failed; code: SlowDown, message: None, resource: None,"
        " request_id: tx0000032ac6ddfe2121a06-0067943977-aeca260-af-object-store,"
        " host_id: aeca260-af-object-store-af-object-store",
        ("aws-error-slowdown", "network", True),
    ),
    # aws/amazon-sagemaker-examples#2418: boto3's upload wrapper quotes the refusal; the role may not
    # write the bucket, so a rerun is refused again
    (
        "S3UploadFailedError: Failed to upload prm.flow to sagemaker-fleet-prm-soln/data_wrangler_flows/"
        "flow-11-00-07-34-0b568079.flow: An error occurred (AccessDenied) when calling the PutObject"
        " operation: Access Denied",
        ("aws-error-accessdenied", "application", False),
    ),
    # aws-samples/aws-panorama-samples#24: the same refusal on a multipart upload
    (
        "S3UploadFailedError: Failed to upload /home/ubuntu/awspanoramasamples/samples/panorama_sdk/models/"
        "ssd_512_resnet50_v1_voc.tar.gz to panorama-xyz/people_counter/ssd_512_resnet50_v1_voc.tar.gz: An"
        " error occurred (AccessDenied) when calling the CreateMultipartUpload operation: Access Denied",
        ("aws-error-accessdenied", "application", False),
    ),
    # LBHackney-IT/Data-Platform#1883: botocore's ClientError with IAM's reason
    (
        "botocore.exceptions.ClientError: An error occurred (AccessDenied) when calling the PutObject"
        " operation: User: arn:aws:iam::120038763019:user/streetscene-airflow-user is not authorized to"
        ' perform: s3:PutObject on resource: "arn:aws:s3:::dataplatform-stg-landing-zone/streetscene/',
        ("aws-error-accessdenied", "application", False),
    ),
    # googleapis/google-cloud-python#3433: google.cloud.exceptions re-exports api_core's classes; the
    # service account may not read the bucket
    (
        TRACEBACK + "google.cloud.exceptions.Forbidden: 403 Caller does not have storage.buckets.get access to"
        " bucket aircraft-audio-data.",
        ("uncaught-exception", "application", False),
    ),
    # dstackai/dstack#488: Google's API answered 503 (no capacity at that moment)
    (
        '  File "/usr/lib/python3.10/site-packages/google/api_core/future/polling.py", line 261, in result\n'
        "    raise self._exception\n"
        "google.api_core.exceptions.ServiceUnavailable: 503 SERVICE UNAVAILABLE",
        ("uncaught-exception", "network", True),
    ),
    # tienfuc/gdcmdtools#20: googleapiclient's HttpError for a 503 on an upload (the thread's page
    # dropped the angle brackets around it)
    (
        TRACEBACK + "apiclient.errors.HttpError: HttpError 503 when requesting"
        " https://www.googleapis.com/upload/drive/v2/files?uploadType=resumable&convert=false&alt=json returned"
        ' "Service Unavailable"',
        ("http-status-503", "network", True),
    ),
    # google/orbax#924: TensorStore's status code heads Orbax's ValueError; the restore looked for
    # a layout the checkpoint was not saved in
    (
        'ValueError: NOT_FOUND: Error opening "zarr" driver: Metadata at local file'
        ' "/home/user/monopi/orbax-test/a/.zarray" does not exist [tensorstore_spec=\'{"context":{"cache_pool":{}},'
        '"driver":"zarr","kvstore":{"driver":"file","path":"/home/user/monopi/orbax-test/a/"}}\']',
        ("tensorstore-status-not-found", "application", False),
    ),
    # google/orbax#446: the same code on a save into a path the container cannot reach
    (
        '  File "/usr/local/lib/python3.9/site-packages/orbax/checkpoint/pytree_checkpoint_handler.py", line 754,'
        " in async_save\n"
        "    future.result()  # Block on result.\n"
        'ValueError: NOT_FOUND: Error opening "cast" driver: Error opening "zarr" driver: Error writing'
        ' "step/.zarray" in OCDBT database at local file'
        ' "/project/checkpoints/checkpoint1.orbax-checkpoint-tmp-1690941767098696/": Error writing local file'
        ' "/project/checkpoints/checkpoint1.orbax-checkpoint-tmp-1690941767098696/manifest.ocdbt": Error getting'
        " file info: /projec",
        ("tensorstore-status-not-found", "application", False),
    ),
    # XavierXiao/Dreambooth-Stable-Diffusion#45: torch.save ran out of host memory; the zip writer's
    # end-of-file check then failed while handling it, and the MemoryError is the cause
    (
        "Epoch 0, global step 499: val/loss_simple_ema was not in top 1\n"
        "Summoning checkpoint.\n\n"
        "Traceback (most recent call last):\n"
        '  File "H:\\Anaconda\\envs\\dreambooth\\lib\\site-packages\\torch\\serialization.py", line 379, in save\n'
        "    _save(obj, opened_zipfile, pickle_module, pickle_protocol)\n"
        '  File "H:\\Anaconda\\envs\\dreambooth\\lib\\site-packages\\torch\\serialization.py", line 499, in _save\n'
        "    zip_file.write_record(name, storage.data_ptr(), num_bytes)\n"
        "MemoryError\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        "Traceback (most recent call last):\n"
        '  File "H:\\Anaconda\\envs\\dreambooth\\lib\\site-packages\\torch\\serialization.py", line 259, in __exit__\n'
        "    self.file_like.write_end_of_file()\n"
        "RuntimeError: [enforce fail at ..\\caffe2\\serialize\\inline_container.cc:300] . unexpected pos"
        " 6057217600 vs 6057217496",
        ("uncaught-exception", "out_of_memory", False),
    ),
    # meta-pytorch/torchforge#568: the end-of-file check alone is the short write itself
    (
        TRACEBACK + "RuntimeError: [enforce fail at inline_container.cc:664] . unexpected pos 704 vs 598",
        ("checkpoint-write-end-failed", "system_software", True),
    ),
    # pytorch/pytorch#121833: the short write, then its end-of-file follow-on
    (
        "    RuntimeError: [enforce fail at inline_container.cc:593] . PytorchStreamWriter failed writing file"
        " data/1: file write failed\n"
        "    \n"
        "    During handling of the above exception, another exception occurred:\n"
        "    \n"
        "    Traceback (most recent call last):\n"
        '      File "C:\\Users\\user\\anaconda3\\Lib\\site-packages\\torch\\serialization.py", line 466, in __exit__\n'
        "        self.file_like.write_end_of_file()",
        ("checkpoint-write-failed", "system_software", True),
    ),
    # r9y9/deepvoice3_pytorch#67: torch.load of an empty checkpoint ("I was trying to load an empty
    # checkpoint"); every resume reads it again
    (
        '  File "/usr/local/lib/python3.5/dist-packages/torch/serialization.py", line 420, in _load\n'
        "    result = unpickler.load()\n"
        "EOFError: Ran out of input",
        ("pickle-empty", "application", False),
    ),
    # NTT123/vietTTS#28: resuming from a pickled checkpoint that is empty
    (
        "Resuming from latest checkpoint at /content/drive/MyDrive/vietTTS_Model/acoustic_latest_ckpt.pickle\n"
        "Traceback (most recent call last):\n"
        '  File "/content/vietTTS/vietTTS/nat/acoustic_trainer.py", line 114, in train\n'
        "    dic = pickle.load(f)\n"
        "EOFError: Ran out of input",
        ("pickle-empty", "application", False),
    ),
]


@pytest.mark.parametrize(("text", "expected"), FAILED)
def test_what_the_store_or_the_file_says_decides(text: str, expected: tuple[str, str, bool]) -> None:
    assert verdict(text) == expected


HEALTHY = [
    # pingcap/tiflash#10538: the AWS SDK for C++ logs S3's SlowDown at WARN before it retries (host
    # address made neutral)
    '[2025/11/07 21:19:56.146 +00:00] [WARN] [S3Common.cpp:156] ["tag=AWSErrorMarshaller message=Encountered'
    " AWSError 'SlowDown': Please reduce your request rate.\"] [source=AWSClient] [thread_id=364]\n"
    '[2025/11/07 21:19:56.144 +00:00] [INFO] [PocoHTTPClient.cpp:388] ["Response status: 503, Slow Down"]'
    ' [source="URI=http://bucket.s3.ap-southeast-1.amazonaws.com/tiflash-root/s8011/data/17.dat pool=false"]'
    " [thread_id=364]",
    # kubeflow/examples#318: TensorFlow's GCS file system retries a checkpoint upload GCS throttled
    "2018-11-07T23:51:01Z  tensorflow      2018-11-07 23:51:01.577393: I"
    " tensorflow/core/platform/cloud/retrying_utils.cc:77] The operation failed and will be automatically"
    " retried in 1.49778 seconds (attempt 1 out of 10), caused by: Unavailable: Upload to"
    " gs://code-search-demo/models/20181107-dist-sync-gpu/model.ckpt-8000_temp_aa3d8a9093914456acccf5aea627e82e/"
    " failed, caused by: Not found: Error executing an HTTP request: HTTP response code 410 with body '{",
    # NVIDIA-NeMo/Megatron-Bridge#2603: dist_checkpointing overwrites a checkpoint folder it finds
    # incomplete, at WARNING, and goes on
    "saving checkpoint at iteration     500 to /workspace/test_exp/model_ckpt in torch_dist format\n"
    "Storing distributed optimizer sharded state of type fully_reshardable\n"
    "[2026-03-01 00:03:52,768][megatron.core.dist_checkpointing.serialization][WARNING] - Overwriting old"
    " incomplete / corrupted checkpoint...",
    # pytorch/torchtitan#1287: an asynchronous checkpoint request while steps go on
    "[rank0]:[0] 2025-06-25 13:06:06,800 - root - INFO - Submitted checkpoint save request for"
    " checkpoint_id=_CheckpointRequestIdentifier(checkpoint_id='./outputs/checkpoint/step-400',"
    " uuid='22d8ae0c-f9c7-4424-ac4b-ab4fdaa4655f')\n"
    "[rank0]:[0] 2025-06-25 13:06:06,800 - root - INFO - Waiting for checkpoint save request...\n"
    "[rank0]:[titan] 2025-06-25 13:06:17,743 - root - INFO - step: 450  loss:  5.1627  memory: 49.66GiB(52.28%)"
    "  tps: 5,858  tflops: 339.25  mfu: 34.30%",
    # anasty17/mirror-leech-telegram-bot#1254: googleapiclient logs a rate-limited 403 at WARNING
    # and the uploader switches accounts and goes on
    '2022-11-30 03:23:02,682 - googleapiclient.http - WARNING - Encountered 403 Forbidden with reason "userRateLimitExceeded"\n'
    "2022-11-30 03:23:02,682 - bot.helper.mirror_utils.upload_utils.gdriveTools - INFO - Switching to 26.json service"
    " account\n"
    "2022-11-30 03:23:02,686 - bot.helper.mirror_utils.upload_utils.gdriveTools - INFO - Got: userRateLimitExceeded,"
    " Trying Again.",
    # instructlab/instructlab#960: the Trainer's notice about an existing checkpoint folder
    "Checkpoint destination directory ./training_results/checkpoint-1 already exists and is non-empty. Saving"
    " will proceed but saved results may be invalid.",
    # keras-team/keras#23609: Orbax's async save timed out and the fit returned (the log shows no
    # failure of the run)
    "ChainedFuture completed 0/1 futures but timed out after 1199.96 seconds\n"
    "Skipping merge of OCDBT checkpoints: No per-process OCDBT checkpoint subdirs found in /tmp/...",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_lines_stay_healthy(text: str) -> None:
    assert verdict(text) == (None, "none", None)
