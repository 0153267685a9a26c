"""Bedrock permissions, scoped to the two configured models and nothing else."""

from __future__ import annotations

from aws_cdk import Stack
from aws_cdk import aws_iam as iam
from constructs import IConstruct

from agent_memory_stack.config import StackConfig, base_model_id, inference_profile
from agent_memory_stack.environment import settings_env
from agent_memory_stack.nag import acknowledge, as_finding


def model_arns(scope: IConstruct, model_id: str) -> list[str]:
    """ARNs ``bedrock:InvokeModel`` (and Converse) must be allowed on to call ``model_id``.

    A foundation model id is one ARN in the stack's region. A cross-region inference profile
    (``us.anthropic...``) is the profile in this region plus its foundation model in whichever
    region the profile routes to, which IAM can only name with a region wildcard.
    """
    stack = Stack.of(scope)
    if not inference_profile(model_id):
        return [f"arn:{stack.partition}:bedrock:{stack.region}::foundation-model/{model_id}"]
    return [
        f"arn:{stack.partition}:bedrock:{stack.region}:{stack.account}:inference-profile/{model_id}",
        f"arn:{stack.partition}:bedrock:*::foundation-model/{base_model_id(model_id)}",
    ]


def grant_invoke(grantee: iam.IGrantable, scope: IConstruct, *model_ids: str) -> None:
    """Allow InvokeModel (Converse uses the same action) on exactly these models."""
    arns = [arn for model_id in model_ids for arn in model_arns(scope, model_id)]
    grantee.grant_principal.add_to_principal_policy(
        iam.PolicyStatement(actions=["bedrock:InvokeModel"], resources=arns)
    )
    for model_id in model_ids:
        if inference_profile(model_id):
            acknowledge(
                scope,
                f"IAM5[Resource::{as_finding(scope, model_arns(scope, model_id)[1])}]",
                "a cross-region inference profile routes to its model in other regions; IAM can "
                "name that model only with a region wildcard (the model itself is not a wildcard)",
            )


def embedding_environment(config: StackConfig) -> dict[str, str]:
    """The settings of every function that embeds text (or builds the store, which checks it).
    No judges: their runtime (onnxruntime) and weights are not in the Lambda code or layer, so
    the writer marks by its nearness rules and the daily review's model has the second look, and
    a search orders by its ranking's rules."""
    return settings_env(
        embedder="bedrock",
        update_judge="none",
        answer_judge="none",
        bedrock_embedding_model_id=config.embedding_model_id,
        embedding_dimension=config.embedding_dimension,
    )
