"""Quick retrieval check for the static model: 20 paraphrased queries, each
with one matching passage, hidden among 40 distractor passages (60 passages
in all, six languages). Reports recall@1, recall@3 and MRR for the shipped
model, for a few other vocabulary/width settings built from the same cached
teacher vectors, and for the teacher itself.

The texts are written for this check only; the queries avoid repeating the
passage wording where a searcher plausibly would.

Usage: python quality.py --model models/embed --teacher-bin e5-small-q4.bin
                         --work scratch/ [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from build import make_static, select_vocabulary, usable_piece_ids  # noqa: E402
from staticmodel import StaticModel, quantize_rows_i8  # noqa: E402
from teacher import Teacher, read_packed_model  # noqa: E402

# (language, query, matching passage)
PAIRS = [
    ("en", "how can I change my account password",
     "To set a new login password, open Settings, choose Security and click 'Update password'. "
     "You will be asked for the current one first."),
    ("en", "what time does the store open on weekends",
     "Our shop is open Saturday and Sunday from 10 a.m. until 6 p.m.; on weekdays we open at 8."),
    ("en", "symptoms of dehydration",
     "Signs that your body lacks water include a dry mouth, headaches, dizziness, dark urine "
     "and feeling very tired."),
    ("en", "refund for a cancelled flight",
     "If the airline calls off your trip, you are entitled to get the ticket money back within "
     "seven days, or to choose a later connection."),
    ("en", "how to speed up a slow laptop",
     "A sluggish notebook often runs faster after removing startup programs, freeing disk space "
     "and adding more memory."),
    ("en", "best way to keep fresh basil",
     "Put the herb's stems in a glass of water on the counter, loosely covered with a plastic "
     "bag; in the fridge the leaves turn black."),
    ("en", "when was the Eiffel Tower built",
     "The iron lattice tower on the Champ de Mars in Paris was constructed between 1887 and "
     "1889 for the World's Fair."),
    ("de", "Wie beantrage ich einen neuen Reisepass?",
     "Einen Pass bekommen Sie beim Bürgeramt Ihrer Stadt. Bringen Sie ein biometrisches Foto "
     "und Ihr altes Dokument mit."),
    ("de", "Zug fällt aus, was tun",
     "Wenn Ihre Verbindung gestrichen wird, dürfen Sie eine andere Bahn nehmen oder sich den "
     "Fahrpreis erstatten lassen."),
    ("de", "Rezept für Kartoffelsalat",
     "Kartoffeln kochen, pellen und in Scheiben schneiden, dann mit Zwiebeln, Brühe, Essig und "
     "Öl vermengen und ziehen lassen."),
    ("de", "Heizung wird nicht warm",
     "Bleiben die Heizkörper kalt, hilft oft das Entlüften: Ventil mit einem Schlüssel öffnen, "
     "bis Wasser statt Luft austritt."),
    ("zh", "如何办理退货",
     "收到商品后七天内可以申请退回，请在订单页面点击“申请售后”，并把包装完好地寄回仓库。"),
    ("zh", "北京明天会下雨吗",
     "气象台预报，首都地区明日有中到大雨，气温十八到二十三度，出门请带伞。"),
    ("zh", "怎么学好英语口语",
     "想提高外语会话能力，最好每天坚持跟读录音，多找机会和母语者交流，不要害怕犯错。"),
    ("zh", "高血压患者饮食注意事项",
     "血压偏高的人应该少吃盐，多吃蔬菜水果，避免油腻食物，并且戒烟限酒。"),
    ("fr", "horaires d'ouverture de la bibliothèque",
     "La médiathèque municipale accueille le public du mardi au samedi, de 9 h à 18 h."),
    ("fr", "comment faire une pâte à crêpes",
     "Mélangez la farine, les œufs et le lait, ajoutez une pincée de sel et laissez reposer "
     "la préparation une heure."),
    ("es", "cómo renovar el carné de conducir",
     "Para actualizar la licencia de manejo debe pedir cita en Tráfico, aportar una foto "
     "reciente y pasar un examen médico."),
    ("es", "playas cerca de Barcelona",
     "A pocos kilómetros de la capital catalana se encuentran las costas de Sitges, "
     "Castelldefels y el Maresme."),
    ("ru", "как сварить борщ",
     "Для этого супа нужны свёкла, капуста, картофель, морковь и лук; варите овощи в мясном "
     "бульоне около часа."),
]

DISTRACTORS = [
    "Passwords must contain at least twelve characters, including a digit and a symbol.",
    "Our warehouse ships orders Monday through Friday; parcels leave before 3 p.m.",
    "Drinking coffee in moderation is generally considered safe for healthy adults.",
    "Baggage allowance: one cabin bag up to 8 kg and one personal item per passenger.",
    "The new tablet features a 120 Hz display and a battery that lasts all day.",
    "Tomatoes ripen faster if you put them in a paper bag with a banana.",
    "The Colosseum in Rome could hold tens of thousands of spectators.",
    "Invoice INV-2291 is overdue; please pay the outstanding balance within 14 days.",
    "Two-factor authentication adds a one-time code sent to your phone.",
    "The museum offers free guided tours every first Sunday of the month.",
    "Regular exercise lowers the risk of heart disease and improves sleep.",
    "Keyboard shortcuts: press Ctrl+C to copy and Ctrl+V to paste.",
    "The river flooded the lower town after three days of heavy rain.",
    "Customers can track their parcel using the number in the confirmation email.",
    "Der Personalausweis ist zehn Jahre gültig, für Personen unter 24 Jahren sechs Jahre.",
    "Die Straßenbahnlinie 4 fährt am Wochenende nur alle zwanzig Minuten.",
    "Der Apfelkuchen schmeckt am besten mit einer Kugel Vanilleeis.",
    "Unsere Stromtarife gelten für Haushalte mit bis zu 6000 Kilowattstunden im Jahr.",
    "Das Fußballspiel endete nach Verlängerung unentschieden.",
    "Im Herbst färben sich die Blätter der Buchen gelb und rot.",
    "Bitte melden Sie Ihren Umzug innerhalb von zwei Wochen beim Einwohnermeldeamt.",
    "Die Waschmaschine zeigt den Fehlercode E18, wenn die Pumpe verstopft ist.",
    "本店支持微信和支付宝付款，不收现金。",
    "上海的地铁网络是世界上最长的之一。",
    "这款手机的电池容量为五千毫安时。",
    "熊猫主要生活在四川的山区，以竹子为食。",
    "会员积分可以在下次购物时抵扣现金。",
    "春节期间，许多家庭会一起包饺子。",
    "这部电影讲述了一个小镇女孩追求音乐梦想的故事。",
    "请在考试开始前三十分钟到达考场。",
    "Le musée du Louvre est fermé le mardi.",
    "La tour Montparnasse offre une vue panoramique sur Paris.",
    "Le TGV relie Lyon à Marseille en moins de deux heures.",
    "Il faut arroser les tomates le soir pendant les fortes chaleurs.",
    "El museo del Prado tiene una de las mejores colecciones de pintura europea.",
    "La tortilla de patatas se sirve caliente o fría.",
    "El vuelo a Madrid sale con cuarenta minutos de retraso.",
    "Los precios del alquiler han subido mucho en las grandes ciudades.",
    "Москва — крупнейший город России по численности населения.",
    "Поезд отправляется с третьего пути в 18:40.",
]

# Extra settings measured from the same teacher vectors: (rows, dims).
VARIANTS = [(250000, 256), (128000, 128), (96000, 192), (64000, 256), (48000, 256), (32000, 256)]


def scores(qv: np.ndarray, pv: np.ndarray) -> dict:
    sims = qv @ pv.T  # gold passage of query i is passage i
    order = np.argsort(-sims, axis=1, kind="stable")
    ranks = np.array([int(np.where(order[i] == i)[0][0]) for i in range(len(qv))])
    return {"r@1": float(np.mean(ranks < 1)), "r@3": float(np.mean(ranks < 3)),
            "mrr": float(np.mean(1.0 / (ranks + 1))), "ranks": ranks.tolist(), "sims": sims}


def agreement(a: np.ndarray, b: np.ndarray) -> float:
    """Pearson correlation of two query x passage similarity matrices."""
    return float(np.corrcoef(a.ravel(), b.ravel())[0, 1])


def variant_model(model, raw, usable, norm_map, rows: int, dims: int) -> StaticModel:
    keep = select_vocabulary(model, usable, rows)
    mat, pieces, sc, _ = make_static(model, raw, usable, keep, dims)
    q, s = quantize_rows_i8(mat)
    return StaticModel(q.astype(np.float32) * s[:, None], pieces, sc, norm_map)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--teacher-bin", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--json")
    args = ap.parse_args()

    queries = [q for _, q, _ in PAIRS]
    passages = [p for _, _, p in PAIRS] + DISTRACTORS
    langs = [lang for lang, _, _ in PAIRS]
    assert len(PAIRS) == 20 and len(DISTRACTORS) == 40

    tmodel = read_packed_model(args.teacher_bin)
    teacher = Teacher(tmodel)
    results = {}

    t_pref = scores(teacher.embed_texts(queries, "query: "), teacher.embed_texts(passages, "passage: "))
    t_none = scores(teacher.embed_texts(queries), teacher.embed_texts(passages))
    results["teacher e5-small (query:/passage:)"] = t_pref
    results["teacher e5-small (no prefix)"] = t_none

    shipped = StaticModel.load(args.model)
    n, d = shipped.vectors.shape
    results[f"static shipped {n}x{d} int8"] = scores(shipped.embed(queries), shipped.embed(passages))
    results[f"static shipped {n}x{d} int8 (query:/passage:)"] = scores(
        shipped.embed(["query: " + q for q in queries]), shipped.embed(["passage: " + p for p in passages]))

    raw = np.load(os.path.join(args.work, "token_vectors.npy"))
    usable = usable_piece_ids(tmodel)
    assert np.array_equal(np.load(os.path.join(args.work, "token_ids.npy")), np.array(usable))
    for rows, dims in VARIANTS:
        sm = variant_model(tmodel, raw, usable, tmodel.norm_map, rows, dims)
        n2 = sm.vectors.shape[0]
        results[f"static variant {n2}x{dims} int8"] = scores(sm.embed(queries), sm.embed(passages))

    ref = t_pref["sims"]
    lines = ["| model | recall@1 | recall@3 | MRR | agreement with teacher |", "|---|---|---|---|---|"]
    out_json = {}
    for name, r in results.items():
        agr = agreement(r["sims"], ref)
        lines.append(f"| {name} | {r['r@1']:.2f} | {r['r@3']:.2f} | {r['mrr']:.3f} | {agr:.3f} |")
        missed = [f"{langs[i]}#{i}->rank{r['ranks'][i] + 1}" for i in range(20) if r["ranks"][i] > 0]
        out_json[name] = {"recall@1": r["r@1"], "recall@3": r["r@3"], "mrr": r["mrr"],
                          "teacher_agreement": agr, "missed_at_1": missed}
    table = "\n".join(lines)
    print(table)
    for name, r in out_json.items():
        print(f"{name}: not first: {', '.join(r['missed_at_1']) or 'none'}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"table": table, "results": out_json}, f, ensure_ascii=False, indent=1)


if __name__ == "__main__":
    main()
