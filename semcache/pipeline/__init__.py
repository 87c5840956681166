"""The request path as an ordered chain of small stages (see ``base`` for the contract).

Order, as ``semcache.compose`` assembles it: policy (``prepare``) -> exact memory -> exact
store -> coalescer -> semantic -> write-behind -> upstream call.
"""

from semcache.pipeline.base import Found, Next, Pipeline, Request, Stage

__all__ = ["Found", "Next", "Pipeline", "Request", "Stage"]
