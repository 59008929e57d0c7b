"""The training route (training/plan.py): the recipe is cut into one small spec per step, once, and the steps below
the trainer never take the whole recipe."""

from __future__ import annotations

import ast
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest

from paranmt_hf.training.plan import plan_training
from paranmt_hf.training.recipes import Recipe, RecipeError

TRAINING = Path(__file__).resolve().parents[1] / "paranmt_hf" / "training"
STEPS = ("data", "initial_model", "optim", "loss", "hf_trainer", "teacher", "tokenlearn", "teacher_pass",
         "teacher_embeddings", "teacher_onnx", "distributed")
"""The modules of the training steps: each takes its own spec (or plain values), never the recipe."""
LABELS = {"name", "description"}
"""Recipe fields no step reads (the run record and the summary keep them)."""
OTHER_VALUES = {
    "kind": "word", "combination": "add", "bilstm_merge": "concat", "token_type": "sp", "lookup": "paranmt50m",
    "word_vectors": "glove-6b-50d", "pooling": "max", "sampling": "MIX", "loss": "mnrl", "lr_scheduler": "linear",
    "optimizer": "adam", "teacher": "other/teacher", "teacher_precision": "int8", "extra": {"layer_norm": True},
}
"""A value unlike the bases' for each field whose type alone does not give one."""


def _other(recipe: Recipe, name: str) -> object:
    value = getattr(recipe, name)
    if name in OTHER_VALUES:
        return OTHER_VALUES[name]
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        return value + 0.5
    if value is None:
        return 7
    raise AssertionError(f"no other value for recipe field {name!r}: add one to OTHER_VALUES")


def test_every_recipe_field_reaches_the_spec_of_a_step():
    """A field that no spec carries would be silently ignored by training: the cut must lose nothing."""
    combined_after = Recipe(kind="trigram", teacher="a/teacher", tokenlearn=True, teacher_weight=1.0,
                            rnn_hidden_size=None)
    trained_table = Recipe(kind="trigram+subword", teacher="a/teacher")
    lost = []
    for f in fields(Recipe):
        if f.name in LABELS:
            continue
        if all(plan_training(base.replace(**{f.name: _other(base, f.name)})) == plan_training(base)
               for base in (combined_after, trained_table, Recipe(kind="lstm"))):
            lost.append(f.name)
    assert not lost, f"recipe fields no step's spec carries: {lost}"


def test_the_plan_is_what_the_steps_take():
    plan = plan_training(Recipe(kind="trigram+subword", teacher="a/teacher", teacher_learning_rate=0.0,
                                keep_norms=True, learning_rate=0.1, num_threads=None))
    assert plan.model.distillation is not None and plan.model.distillation.teacher == "a/teacher"
    assert plan.optimizer.table_rate == 0.0 and plan.optimizer.keep_norms and plan.optimizer.learning_rate == 0.1
    assert plan.finish is not None and plan.finish.table is None  # the table trained: nothing to combine after
    assert plan.threads == 1  # averaging encoders train on one thread unless told
    after = plan_training(Recipe(kind="trigram", teacher="a/teacher", tokenlearn=True, tokenlearn_sentences=9))
    assert after.model.distillation is None and after.optimizer.table_rate is None
    assert after.finish.table.teacher == "a/teacher" and after.finish.tokenlearn.sentences == 9
    assert plan_training(Recipe(kind="lstm")).threads is None and plan_training(Recipe()).finish is None
    with pytest.raises(FrozenInstanceError):
        plan.model.kind = "word"  # type: ignore[misc]


@pytest.mark.parametrize(("recipe", "named"), [
    (Recipe(kind="subword", teacher="a/teacher", teacher_learning_rate=0.0), "--teacher-lr 0"),
    (Recipe(kind="subword+subword", teacher="a/teacher", teacher_learning_rate=0.0), "--teacher-lr 0"),
    (Recipe(kind="subword", teacher="a/teacher", learning_rate=0.0), "--lr"),
    (Recipe(kind="trigram+subword", teacher="a/teacher", learning_rate=0.0, teacher_learning_rate=0.0),
     "--teacher-lr 0"),
    (Recipe(kind="trigram", learning_rate=0.0), "--lr"),
    (Recipe(kind="trigram", teacher="a/teacher", tokenlearn=True, learning_rate=0.0), "--lr"),
    (Recipe(kind="lstm", learning_rate=-0.1), "--lr"),
    (Recipe(kind="trigram+subword", teacher="a/teacher", teacher_learning_rate=-1.0), "--teacher-lr"),
])
def test_a_recipe_that_trains_nothing_is_refused_by_the_plan(recipe, named):
    """Every parameter frozen (or a negative rate): one sentence naming the flag, before any step runs."""
    with pytest.raises(RecipeError, match="must be >= 0|nothing to train") as caught:
        plan_training(recipe)
    assert named in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("recipe", [
    Recipe(kind="trigram+subword", teacher="a/teacher", teacher_learning_rate=0.0),  # frozen table, trained trigrams
    Recipe(kind="subword", teacher="a/teacher", learning_rate=0.0, teacher_learning_rate=0.01),  # the table trains
    Recipe(kind="subword", learning_rate=0.01, teacher_learning_rate=0.0),  # no teacher: no table to freeze
    Recipe(kind="trigram", teacher="a/teacher", teacher_learning_rate=0.0),  # the table is combined after training
])
def test_a_recipe_with_something_to_train_is_planned(recipe):
    assert plan_training(recipe).optimizer.learning_rate == recipe.learning_rate


@pytest.mark.parametrize("module", STEPS)
def test_no_step_takes_the_recipe(module):
    """The route flows down: only the trainer, the plan and the run record (checkpoints) see a ``Recipe``."""
    tree = ast.parse((TRAINING / f"{module}.py").read_text(encoding="utf-8"))
    taken = sorted({alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                    for alias in node.names if alias.name in {"Recipe", "get_recipe", "RECIPES", "plan_training"}})
    assert not taken, f"training/{module}.py imports {taken}: give the step its spec from training/plan.py instead"
