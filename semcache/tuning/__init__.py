"""The hit-rate tuning loop: feedback, shadow verification, a live false-hit estimate, miss
analysis and recalibration.

Module map: ``records`` (what is recorded), ``ledger`` (recent serves, for feedback),
``labels`` (labeled pairs, JSONL), ``sampling`` (which hits are verified), ``compare`` (do
two answers agree), ``shadow`` (background verification), ``estimate`` (the live false-hit
rate and its interval), ``misses`` (near misses: recording, clustering, export), ``stage``
(the pipeline stage), ``loop`` (the state one cache shares, feedback), ``api`` (the
facade's methods), ``settings`` (the ``verify`` and ``tuning`` sections), ``metrics``
(Prometheus export), ``misses_cli`` (``semcache misses``), ``simulate`` (a labeled synthetic
stream with drift, for the benchmark and the notebook). Recalibration from recorded labels is
``semcache.eval.recalibrate`` (``semcache calibrate --labels``).
"""
