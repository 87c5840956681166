"""Identity first in LiteLLM's cache slot: the proxy's authenticated caller decides the tenant.

The metadata is built by LiteLLM's own proxy code (``add_user_api_key_auth_to_request_metadata``,
the step that writes the authenticated key, team and org into a request), then the call goes
through ``litellm.completion`` against the loopback fake upstream, as the proxy makes it.
"""

from __future__ import annotations

import itertools

import litellm
import pytest
from litellm.proxy.litellm_pre_call_utils import LiteLLMProxyRequestSetup
from litellm.types.proxy.auth.user_api_key_auth import UserAPIKeyAuth

from semcache import CacheSettings, SemanticCache
from semcache.core.policy import DEFAULT_TENANT
from semcache.integrations.litellm import LiteLLMCache, tenant_of
from semcache.testing import InMemoryStore

QUESTION = [{"role": "user", "content": "What is our refund policy for enterprise plans?"}]
VICTIM = UserAPIKeyAuth(api_key="hash-victim", team_id="team-v", org_id="org-v")
VICTIM_ID = "litellm:user_api_key=hash-victim;user_api_key_team_id=team-v;user_api_key_org_id=org-v"


def proxied(auth: UserAPIKeyAuth, body_metadata: dict | None = None) -> dict:
    """The ``metadata`` LiteLLM's proxy hands to ``litellm.acompletion`` for this caller."""
    data = {"metadata": dict(body_metadata or {})}
    for name in [k for k in data["metadata"] if k.startswith("user_api_key_")]:
        data["metadata"].pop(name)  # the proxy's own strip of caller-supplied identity
    LiteLLMProxyRequestSetup.add_user_api_key_auth_to_request_metadata(
        data=data, user_api_key_dict=auth, _metadata_variable_name="metadata"
    )
    return data["metadata"]


@pytest.fixture
def installed(minilm):
    settings = CacheSettings(semantic={"threshold": 0.8}, store={"backend": "edge"})
    with SemanticCache(settings, embedder=minilm, store=InMemoryStore()) as cache:
        litellm.cache = LiteLLMCache(cache)
        yield cache
        litellm.disable_cache()


def call(upstream, **kwargs):
    return litellm.completion(
        model="openai/gpt-4o-mini",
        api_base=upstream.api_base,
        api_key="k",
        messages=QUESTION,
        **kwargs,
    )


def hit(response) -> bool:
    return bool(response._hidden_params.get("cache_hit"))


def test_each_identity_source_decides_the_tenant_and_a_claim_only_narrows():
    key_only = proxied(UserAPIKeyAuth(api_key="h1"), {"tenant": "x"})
    assert tenant_of({"metadata": key_only}) == "litellm:user_api_key=h1/x"
    team = proxied(UserAPIKeyAuth(team_id="t1"))
    assert tenant_of({"metadata": team}) == "litellm:user_api_key_team_id=t1"
    org = proxied(UserAPIKeyAuth(org_id="o1"), {"tenant": VICTIM_ID})
    assert tenant_of({"metadata": org}) == f"litellm:user_api_key_org_id=o1/{VICTIM_ID}"
    nobody = proxied(UserAPIKeyAuth(), {"tenant": "x"})
    assert tenant_of({"metadata": nobody}) == "litellm:anonymous/x"
    # LiteLLM hands the same metadata on under litellm_params too.
    assert tenant_of({"litellm_params": {"metadata": team}}) == "litellm:user_api_key_team_id=t1"


def test_forged_identity_beside_the_proxys_is_ignored_and_values_are_escaped():
    forged = {"user_api_key": "hash-victim", "user_api_key_team_id": "team-v", "tenant": "t"}
    mine = proxied(UserAPIKeyAuth(api_key="hash-a"))
    assert tenant_of({"metadata": mine, "litellm_metadata": forged}) == (
        "litellm:user_api_key=hash-a/t"
    )
    slash = proxied(UserAPIKeyAuth(api_key="a/b;c=d"))
    assert tenant_of({"metadata": slash}) == "litellm:user_api_key=a%2Fb%3Bc%3Dd"
    # Without the proxy (plain SDK calls) the application's own fields and claim still apply.
    assert tenant_of({"metadata": {"tenant": "t"}}) == "t"
    sdk = {"metadata": {"user_api_key": "hk", "user_api_key_team_id": "x"}}
    assert tenant_of(sdk) == "litellm:user_api_key=hk;user_api_key_team_id=x"


ATTACKERS = [
    UserAPIKeyAuth(api_key="hash-a", team_id="team-v", org_id="org-v"),  # same team, other key
    UserAPIKeyAuth(api_key="hash-a", team_id="team-a", org_id="org-v"),  # same org
    UserAPIKeyAuth(api_key="hash-a"),  # a bare key
]
CLAIMS = [
    None,
    VICTIM_ID,
    f"{VICTIM_ID}/shared",
    "shared",
    DEFAULT_TENANT,
    "hash-victim",
    "team-v",
    "litellm:user_api_key=hash-victim",
    "../shared",
    "/shared",
    f"{VICTIM_ID};x",
    "litellm:anonymous",
]
FORGERIES = [
    {},
    {"metadata": {"user_api_key": "hash-victim", "user_api_key_hash": "hash-victim"}},
    {"metadata": {"user_api_key_team_id": "team-v", "user_api_key_org_id": "org-v"}},
    {
        "litellm_metadata": {
            "user_api_key": "hash-victim",
            "user_api_key_team_id": "team-v",
            "user_api_key_org_id": "org-v",
            "user_api_key_auth": {"api_key": "hash-victim"},
        }
    },
]


def test_no_tenant_claim_reaches_another_callers_answers(installed, upstream):
    """3 attackers x 12 claims x 4 forgeries = 144 attempts through litellm.completion."""
    for claim in (None, "shared"):  # the victim's entries: bare, and narrowed to "shared"
        body = {} if claim is None else {"tenant": claim}
        call(upstream, metadata=proxied(VICTIM, body))
    assert hit(call(upstream, metadata=proxied(VICTIM)))  # the victim itself is served
    assert hit(call(upstream, metadata=proxied(VICTIM, {"tenant": "shared"})))
    attempts = successes = 0
    for attacker, claim, forgery in itertools.product(ATTACKERS, CLAIMS, FORGERIES):
        body = {**forgery.get("metadata", {}), **({} if claim is None else {"tenant": claim})}
        extra = (
            {"litellm_metadata": forgery["litellm_metadata"]}
            if "litellm_metadata" in forgery
            else {}
        )
        response = call(
            upstream, metadata=proxied(attacker, body), cache={"no-store": True}, **extra
        )
        attempts += 1
        successes += hit(response)
    assert attempts >= 100
    assert successes == 0
