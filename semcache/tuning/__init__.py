"""The hit-rate tuning loop: feedback, shadow verification, a live false-hit estimate, miss
analysis. Recalibration from recorded labels is ``semcache.eval.recalibrate``.
"""
