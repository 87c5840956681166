"""Do the answers ``store()`` accepted survive a restart, and do paraphrases of them hit?

    python benchmarks/bench_store_durability.py [--n 10000] [--store-many]

Default settings (bundled MiniLM on the CPU, the embedded store in a temporary directory,
admission control at its defaults), except the store path. ``--n`` distinct questions are
stored with one ``store()`` call each (``--store-many``: one ``store_many`` call): the 100
hand-written questions below plus generated ones (templates x products x numbers, distinct
by construction). Then the cache is closed and a new one opened on the same path (a
restart), and every question is checked: found exactly (tier ``exact``, the stored answer).
Then the 100 hand-written paraphrases are checked: a hit counts only when it serves the
paraphrased question's own answer.

Target: n found of n, and >= 99% of the paraphrases hit. The baseline measured in
the same run is ``flush()``'s own report (what write-behind says it wrote) against what the
restarted cache finds. The machine is shared: timings are noisy, counts are not.
"""

from __future__ import annotations

import argparse
import itertools
import os
import tempfile
import time

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from semcache import CacheSettings, SemanticCache
from semcache.stats import Tier

MODEL = "bench-model"

#: (question, paraphrase): light rewordings of everyday support questions.
PAIRS = [
    ("How do I reset my password?", "How can I reset my password?"),
    ("How do I change my email address?", "How can I change my email address?"),
    ("How do I delete my account?", "How can I delete my account?"),
    ("Where can I download my invoices?", "Where do I download my invoices?"),
    ("How do I cancel my subscription?", "How can I cancel my subscription?"),
    ("What payment methods do you accept?", "Which payment methods do you accept?"),
    ("How long does shipping take?", "How long does the shipping take?"),
    (
        "Can I change my delivery address after ordering?",
        "Can I change my delivery address after placing an order?",
    ),
    ("How do I track my order?", "How can I track my order?"),
    ("What is your refund policy?", "What's your refund policy?"),
    ("How do I enable two-factor authentication?", "How can I enable two-factor authentication?"),
    ("Why was my card declined?", "Why did my card get declined?"),
    ("How do I update my billing information?", "How can I update my billing information?"),
    ("Do you ship internationally?", "Do you ship internationally at all?"),
    ("How do I contact customer support?", "How can I contact customer support?"),
    ("Can I pause my membership?", "Is it possible to pause my membership?"),
    ("How do I export my data?", "How can I export my data?"),
    ("What are your opening hours?", "What are your opening hours, please?"),
    ("How do I upgrade my plan?", "How can I upgrade my plan?"),
    ("How do I downgrade my plan?", "How can I downgrade my plan?"),
    ("Is there a student discount?", "Is there any student discount?"),
    ("How do I apply a promo code?", "How can I apply a promo code?"),
    ("Why can't I log in to my account?", "Why am I unable to log in to my account?"),
    ("How do I change my username?", "How can I change my username?"),
    ("Can I have more than one account?", "Can I have multiple accounts?"),
    ("How do I invite a team member?", "How can I invite a team member?"),
    ("How do I remove a team member?", "How can I remove a team member?"),
    ("What browsers are supported?", "Which browsers are supported?"),
    ("Is my data encrypted?", "Is all my data encrypted?"),
    ("How do I turn off email notifications?", "How can I turn off email notifications?"),
    ("How do I change the language of the app?", "How can I change the app language?"),
    ("Where is my order confirmation?", "Where can I find my order confirmation?"),
    ("How do I return a damaged item?", "How can I return a damaged item?"),
    ("Can I exchange an item for a different size?", "Can I exchange an item for another size?"),
    ("How do I set up automatic payments?", "How can I set up automatic payments?"),
    ("What happens when my trial ends?", "What happens after my trial ends?"),
    ("How do I connect my calendar?", "How can I connect my calendar?"),
    ("Does the app work offline?", "Can the app work offline?"),
    (
        "How do I reset the app to factory settings?",
        "How can I reset the app to its factory settings?",
    ),
    ("How do I report a bug?", "How can I report a bug?"),
    ("How do I request a feature?", "How can I request a feature?"),
    ("Can I use the service on my phone?", "Can I use the service on my mobile phone?"),
    ("How do I recover a deleted file?", "How can I recover a deleted file?"),
    ("How do I share a document with a colleague?", "How can I share a document with a colleague?"),
    ("What is the maximum file upload size?", "What's the maximum file upload size?"),
    ("How do I change my profile picture?", "How can I change my profile picture?"),
    ("How do I verify my phone number?", "How can I verify my phone number?"),
    ("Why is the app running slowly?", "Why is the app running so slowly?"),
    ("How do I clear the cache in the app?", "How can I clear the app cache?"),
    ("How do I log out of all devices?", "How can I log out of all my devices?"),
    ("Can I get a copy of my receipt?", "Can I get a copy of the receipt?"),
    ("How do I add a new payment card?", "How can I add a new payment card?"),
    ("How do I remove a saved payment card?", "How can I remove a saved payment card?"),
    ("What does the premium plan include?", "What is included in the premium plan?"),
    ("How do I schedule a meeting?", "How can I schedule a meeting?"),
    ("How do I change my time zone?", "How can I change my time zone?"),
    ("Can I restore a previous version of a file?", "Can I restore an earlier version of a file?"),
    ("How do I create a shared folder?", "How can I create a shared folder?"),
    ("How do I sync my contacts?", "How can I sync my contacts?"),
    ("Is there a dark mode?", "Is there a dark mode available?"),
    ("How do I enable dark mode?", "How can I enable dark mode?"),
    ("How do I print a shipping label?", "How can I print a shipping label?"),
    ("Where do I enter my tax ID?", "Where can I enter my tax ID?"),
    (
        "How do I change my company name on invoices?",
        "How can I change my company name on the invoices?",
    ),
    (
        "Can I get a refund for an unused subscription?",
        "Can I get refunded for an unused subscription?",
    ),
    ("How do I set a spending limit?", "How can I set a spending limit?"),
    ("How do I block a user?", "How can I block a user?"),
    ("How do I unblock a user?", "How can I unblock a user?"),
    ("How do I mute a conversation?", "How can I mute a conversation?"),
    ("How do I archive old messages?", "How can I archive old messages?"),
    ("How do I transfer ownership of a workspace?", "How can I transfer ownership of a workspace?"),
    (
        "What is the difference between admin and member roles?",
        "What's the difference between the admin and member roles?",
    ),
    ("How do I install the desktop app?", "How can I install the desktop app?"),
    ("How do I uninstall the desktop app?", "How can I uninstall the desktop app?"),
    ("Does the service have an API?", "Does the service offer an API?"),
    ("How do I generate an API key?", "How can I generate an API key?"),
    ("How do I revoke an API key?", "How can I revoke an API key?"),
    ("What are the API rate limits?", "What are the rate limits of the API?"),
    ("How do I set up single sign-on?", "How can I set up single sign-on?"),
    ("How do I change my notification sound?", "How can I change the notification sound?"),
    ("How do I make my profile private?", "How can I make my profile private?"),
    ("Who can see my posts?", "Who is able to see my posts?"),
    ("How do I delete a post?", "How can I delete a post?"),
    ("How do I edit a comment?", "How can I edit a comment?"),
    ("How do I reorder items in a list?", "How can I reorder the items in a list?"),
    (
        "How do I import contacts from a spreadsheet?",
        "How can I import contacts from a spreadsheet?",
    ),
    ("How do I merge duplicate contacts?", "How can I merge duplicate contacts?"),
    ("Can I undo sending an email?", "Is it possible to undo sending an email?"),
    ("How do I set an out-of-office reply?", "How can I set an out-of-office reply?"),
    ("How do I add a signature to my emails?", "How can I add a signature to my emails?"),
    ("How do I create a filter for incoming mail?", "How can I create a filter for incoming mail?"),
    ("How do I move my account to another region?", "How can I move my account to another region?"),
    ("Where are your data centers located?", "Where are all your data centers located?"),
    ("How do I download the mobile app?", "How can I download the mobile app?"),
    ("How do I change the currency of my store?", "How can I change my store's currency?"),
    ("How do I add a product to my store?", "How can I add a product to my store?"),
    ("How do I set up discounts for my customers?", "How can I set up discounts for my customers?"),
    ("How do I connect a custom domain?", "How can I connect a custom domain?"),
    ("How do I renew my SSL certificate?", "How can I renew my SSL certificate?"),
    ("How do I back up my website?", "How can I back up my website?"),
]

TEMPLATES = [
    "What is the warranty period for the {p} model {n}?",
    "Does the {p} model {n} come with a charger?",
    "How much does the {p} model {n} weigh?",
    "Is the {p} model {n} compatible with the previous generation?",
    "When will the {p} model {n} be back in stock?",
]
PRODUCTS = ["printer", "router", "camera", "headset", "monitor", "keyboard", "speaker", "tablet"]


def generated(count: int) -> list[str]:
    """``count`` distinct template questions (template x product x number)."""
    rows = itertools.product(range(1, 10**6), TEMPLATES, PRODUCTS)
    return [t.format(p=p, n=n) for n, t, p in itertools.islice(rows, count)]


def answer_of(question: str) -> str:
    return f"answer to: {question}"


def loadavg() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="questions stored (>= 100)")
    parser.add_argument("--store-many", action="store_true", help="one store_many call")
    args = parser.parse_args()
    questions = [q for q, _ in PAIRS] + generated(args.n - len(PAIRS))
    assert len(set(questions)) == len(questions) == args.n
    print(f"load average before: {loadavg()} (shared machine: timings are noisy)")
    with tempfile.TemporaryDirectory() as tmp:
        settings = CacheSettings(store={"path": tmp})
        with SemanticCache(settings) as cache:
            assert cache.ready()
            started = time.perf_counter()
            if args.store_many:
                items = [{"prompt": q, "response": answer_of(q)} for q in questions]
                imported = cache.store_many(items, model=MODEL)
                print(f"store_many: {imported.written} written, {len(imported.failed)} failed")
            else:
                keys = [cache.store(q, answer_of(q), model=MODEL) for q in questions]
                assert None not in keys
            report = cache.flush()
            stored_s = time.perf_counter() - started
            stats = cache.stats()
        print(
            f"stored {args.n} in {stored_s:.1f} s ({args.n / stored_s:.0f}/s); flush report: "
            f"{report.written} written, {report.dropped} dropped, {report.failed} failed "
            f"{dict(report.reasons)}; shed {dict(stats.shed)}; load average {loadavg()}"
        )
        with SemanticCache(settings) as cache:  # the restart
            assert cache.ready()
            started = time.perf_counter()
            found = 0
            for q in questions:
                hit = cache.check(q, model=MODEL)
                exact = hit is not None and hit.info.tier is Tier.EXACT
                found += exact and hit.text == answer_of(q)
            checked_s = time.perf_counter() - started
            hits, wrong, missed = 0, 0, []
            for q, para in PAIRS:
                hit = cache.check(para, model=MODEL)
                if hit is not None and hit.text == answer_of(q):
                    hits += 1
                elif hit is not None:
                    wrong += 1
                else:
                    missed.append(para)
            entries = cache.stats().store_entries
    flushed = report.written
    print(
        f"after restart: {found} of {args.n} found exactly ({found / args.n:.2%}) in "
        f"{checked_s:.1f} s; store holds {entries}; write-behind reported {flushed} written "
        f"(ratio found / reported: {found / max(flushed, 1):.4f})"
    )
    print(
        f"paraphrases: {hits} of {len(PAIRS)} hit their own answer ({hits / len(PAIRS):.0%}), "
        f"{wrong} served another answer; target >= 99%"
    )
    for para in missed:
        print(f"  missed: {para}")
    print(f"load average after: {loadavg()}")


if __name__ == "__main__":
    main()
