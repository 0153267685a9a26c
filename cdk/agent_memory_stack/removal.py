"""What happens to the resources that hold data when the stack deletes or replaces them.

With ``retain_data`` (the default) the tables, the OpenSearch domain and the buckets are kept
when the stack is deleted or a resource is replaced, but not when the stack's first deploy rolls
back: CloudFormation's ``RetainExceptOnCreate`` deletes what a failed create made. A first
deploy that fails after the twenty minutes the domain takes to create therefore leaves nothing
behind (no domain billing by the hour, no name taken), and ``cdk deploy`` can simply be run
again. Whatever is kept after a ``cdk destroy`` keeps its data and its bill: delete it by hand
once it is no longer wanted (docs/infrastructure.md, "Deleting the stack").
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy


def retained(keep: bool) -> RemovalPolicy:
    """The removal policy of a resource holding data: kept (except after a failed first
    deploy) when ``keep``, else deleted with the stack."""
    return RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE if keep else RemovalPolicy.DESTROY
