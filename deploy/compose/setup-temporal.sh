#!/bin/sh
# Prepares a Temporal service for recovery (run once, in temporalio/admin-tools, or by hand
# with any `temporal` CLI): the namespace with its retention, and recovery's search attributes.
# Safe to run again: what exists already is left as it is.
#   TEMPORAL_ADDRESS     the frontend (default temporal:7233)
#   RECOVERY_NAMESPACE   the namespace (default `default`)
#   RECOVERY_RETENTION   how long closed runs stay visible, for a new namespace (default 30d)
set -eu
address="${TEMPORAL_ADDRESS:-temporal:7233}"
namespace="${RECOVERY_NAMESPACE:-default}"
retention="${RECOVERY_RETENTION:-30d}"

# Name=Type, exactly as in workflows/search_attributes.py (a test checks).
ATTRIBUTES="
RecoveryState=Keyword
RecoveryScheduler=Keyword
RecoveryJobIds=KeywordList
RecoveryAttempts=Int
RecoveryLastSymptom=Keyword
RecoveryExcludedNodes=KeywordList
RecoveryOwner=Keyword
RecoveryPipeline=Keyword
"

tries=0
until temporal operator cluster health --address "$address" >/dev/null 2>&1; do
    tries=$((tries + 1))
    if [ "$tries" -ge 60 ]; then
        echo "Temporal at $address is not healthy after 2 minutes" >&2
        exit 1
    fi
    sleep 2
done

if temporal operator namespace describe --address "$address" --namespace "$namespace" >/dev/null 2>&1; then
    echo "namespace $namespace exists (its retention is left as it is)"
else
    temporal operator namespace create --address "$address" --namespace "$namespace" --retention "$retention"
    echo "namespace $namespace created, retention $retention"
fi

# A namespace just created takes a few seconds to be known everywhere.
tries=0
until existing=$(temporal operator search-attribute list --address "$address" --namespace "$namespace" 2>&1); do
    tries=$((tries + 1))
    if [ "$tries" -ge 30 ]; then
        echo "cannot list the search attributes of $namespace: $existing" >&2
        exit 1
    fi
    sleep 2
done
for pair in $ATTRIBUTES; do
    name=${pair%%=*}
    kind=${pair#*=}
    if printf '%s\n' "$existing" | grep -Eq "^[[:space:]]*$name[[:space:]]"; then
        echo "search attribute $name exists"
    else
        temporal operator search-attribute create --address "$address" --namespace "$namespace" \
            --name "$name" --type "$kind"
        echo "search attribute $name ($kind) created"
    fi
done
