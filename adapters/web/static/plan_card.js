"use strict";
// The plan card: every row is one of the plan's cost lines as the server priced and worded them
// (tools.plan_costs, bot.delivery.plan_words), so the rows add up to the total under them, as on
// every other surface. The page computes no money; it only places what it is given.
window.PlanCard = (() => {
  const T = {
    en: {
      legs: "Getting there", party: "Everyone's journey", stay: "Where to stay", sights: "Things to see",
      total: "Total", alternatives: "Backups", notes: "Notes",
      travellers: (n) => `${n} traveller${n === 1 ? "" : "s"}`, minutes: (n) => `${n} min`,
      breakfast: "breakfast included", free: "Free",
      sandbox: "Sandbox data: timetables, prices and hotels are simulated for the offline demo and cannot be booked.",
      kinds: { train: "Train", flight: "Flight", taxi: "Taxi", drive: "Drive", transit: "Transit", walk: "Walk" },
    },
    zh: {
      legs: "交通", party: "各人行程", stay: "住宿", sights: "游览", total: "合计", alternatives: "备选方案", notes: "备注",
      travellers: (n) => `${n}人`, minutes: (n) => `${n}分钟`, breakfast: "含早餐", free: "免费",
      sandbox: "沙盒数据：车次、价格和酒店均为离线演示的模拟数据，无法预订。",
      kinds: { train: "火车", flight: "航班", taxi: "打车", drive: "自驾", transit: "公交地铁", walk: "步行" },
    },
  };

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function render(p, costs, places, lang) {
    const t = T[lang] || T.en;
    const money = (v) => "¥" + (Math.round(Number(v || 0) * 100) / 100).toLocaleString(lang === "zh" ? "zh-CN" : "en-US",
      { minimumFractionDigits: Number(v) % 1 ? 2 : 0, maximumFractionDigits: 2 });
    const name = (s) => (places && places[s]) || s || "";
    const lines = (costs && costs.lines) || [];
    const lineOf = (kind, index, who) => lines.find((l) => l.kind === kind && l.index === index && (l.who || "") === (who || ""));
    const priceEl = (line, free) => {
      if (!line || !Number(line.amount)) return free ? el("span", "price free", t.free) : el("span", "price", "");
      const span = el("span", "price", money(line.amount));
      span.dataset.amount = String(line.amount);
      return span;
    };
    const row = (what, line, sub, free) => {
      const r = el("div", "row");
      r.append(el("span", "what", what), priceEl(line, free));
      const bits = sub.filter(Boolean);
      if (line && line.counted) bits.push(line.text);
      if (bits.length) r.append(el("span", "sub", bits.join(" · ")));
      return r;
    };
    const legRow = (l, line) => {
      const kind = (t.kinds[l.kind] || l.kind) + (l.number ? " " + l.number : "");
      return row(`${kind}: ${name(l.origin)} → ${name(l.destination)}`, line,
        [`${l.depart} → ${l.arrive}`, l.airline, l.seat]);
    };

    const card = el("section", "plan-card");
    card.append(el("h2", null, p.title || `${name(p.origin_city)} → ${name(p.destination_city)}`));
    const dates = p.start_date + (p.end_date && p.end_date !== p.start_date ? " – " + p.end_date : "");
    card.append(el("div", "meta", `${name(p.origin_city)} → ${name(p.destination_city)} · ${dates} · ${t.travellers(p.travellers || 1)}`));
    if (p.party && p.party.length) {
      card.append(el("h3", null, t.party));
      for (const person of p.party) {
        const share = ((costs && costs.shares) || []).find((s) => s.who === person.name);
        const head = el("div", "person");
        head.append(el("span", "who", `${person.name} · ${name(person.home_city)}`));
        if (share) head.append(el("span", "share", share.text));
        card.append(head);
        (person.legs || []).forEach((l, i) => card.append(legRow(l, lineOf("leg", i, person.name))));
      }
    }
    if (p.legs && p.legs.length) {
      card.append(el("h3", null, t.legs));
      p.legs.forEach((l, i) => card.append(legRow(l, lineOf("leg", i, ""))));
    }
    if (p.stays && p.stays.length) {
      card.append(el("h3", null, t.stay));
      p.stays.forEach((s, i) => card.append(row(name(s.name), lineOf("stay", i, ""),
        [name(s.city), `${s.checkin_date} → ${s.checkout_date}`, s.breakfast ? t.breakfast : ""])));
    }
    if (p.visits && p.visits.length) {
      card.append(el("h3", null, t.sights));
      p.visits.forEach((v, i) => card.append(row(name(v.name), lineOf("ticket", i, ""),
        [name(v.city), v.date + (v.start ? " " + v.start : ""), v.duration_min ? t.minutes(v.duration_min) : ""], true)));
    }
    const totalValue = costs ? costs.total : p.total_cost;
    const total = el("div", "total");
    const amount = el("span", "price", money(totalValue) + (p.currency && p.currency !== "CNY" ? " " + p.currency : ""));
    amount.dataset.amount = String(totalValue);
    total.append(el("span", null, t.total), amount);
    card.append(total);
    if (costs && costs.text) card.append(el("div", "total-sub", costs.text));
    // the notes, then what the plan could not know (TripPlan.all_notes, as the other surfaces show it)
    for (const [key, items] of [["alternatives", p.alternatives], ["notes", [...(p.notes || []), ...(p.unknowns || [])]]]) {
      if (items && items.length) {
        card.append(el("h3", null, t[key]));
        const ul = el("ul");
        for (const it of items) ul.appendChild(el("li", null, it));
        card.append(ul);
      }
    }
    if (p.data_source === "sandbox" || p.data_source === "mixed") card.append(el("div", "sandbox", t.sandbox));
    return card;
  }

  return { render };
})();
